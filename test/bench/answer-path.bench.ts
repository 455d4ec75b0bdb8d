import { callWorkflowId } from '../../workflows/shared/calls';
import { createAgent, postJson, startCallsBenchStack, percentile, type CallsBenchStack } from './calls-stack';

export interface AnswerPathBenchResult {
  name: string;
  ok: boolean;
  lines: string[];
}

const ONE_AT_A_TIME_CALLS = 15;
const CONCURRENT_CALLS = 40;
const CONCURRENCY = 20;

/**
 * Where the time goes between a callee answering and the API knowing the conversation's media
 * node (the answer update's reply, which sends the provider's audio stream there): every
 * millisecond of it is silence for the callee. Read from the call workflows' histories, with
 * calls placed one at a time and then 20 at a time, in one run on the calls bench's stack
 * (API and workers in this process, the media node and the simulators in their own):
 * - accepted -> scheduled: the update accepted, `call.started` written, the conversation scheduled;
 * - scheduled -> announced: a media node takes the conversation and signals the workflow;
 * - announced -> completed: the workflow's next task completes the update.
 * (The wait before the update's acceptance, the task that runs it, is not in the history.)
 */
export async function answerPathBench(): Promise<AnswerPathBenchResult> {
  const stack = await startCallsBenchStack({ concurrencyLimit: 50 });
  try {
    const agentId = await createAgent(stack, { welcome_message: 'Hi.' });
    const lines: string[] = [];
    let measured = 0;
    for (const [calls, concurrency] of [
      [ONE_AT_A_TIME_CALLS, 1],
      [CONCURRENT_CALLS, CONCURRENCY],
    ] as const) {
      const steps = await answerSteps(stack, agentId, calls, concurrency);
      measured += steps.get('accepted -> completed')?.length ?? 0;
      lines.push(`${concurrency} at a time (${calls} calls):`);
      for (const [name, values] of steps) lines.push(`  ${name}: p50 ${percentile(values, 50).toFixed(0)} ms, p95 ${percentile(values, 95).toFixed(0)} ms`);
    }
    return { name: 'answer path: callee answers -> media node known to the API (call workflow histories)', ok: measured === ONE_AT_A_TIME_CALLS + CONCURRENT_CALLS, lines };
  } finally {
    await stack.stop();
  }
}

async function answerSteps(stack: CallsBenchStack, agentId: string, calls: number, concurrency: number): Promise<Map<string, number[]>> {
  const numbers = Array.from({ length: calls }, (_, i) => `+9198${String(10_000_000 + concurrency * 1_000 + i)}`);
  await stack.simulators.setCallees(numbers, { kind: 'answer', answerAfterSeconds: 0.2, hangUpAfterSeconds: 3 });
  const ids: string[] = [];
  for (let i = 0; i < calls; i += concurrency) {
    const placed = await Promise.all(numbers.slice(i, i + concurrency).map((to) => postJson(stack, '/calls', { agent_id: agentId, to_number: to, from_number: stack.fromNumber })));
    const batch = placed.map((p) => String(p.json.id));
    ids.push(...batch);
    await Promise.all(batch.map((id) => stack.client.workflow.getHandle(callWorkflowId(id)).result().catch(() => undefined)));
  }
  const steps = new Map<string, number[]>();
  const add = (name: string, ms: number) => steps.set(name, [...(steps.get(name) ?? []), ms]);
  for (const id of ids) {
    const events = (await stack.client.workflow.getHandle(callWorkflowId(id)).fetchHistory()).events ?? [];
    const at = (e: (typeof events)[number]) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
    const accepted = events.find((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runConversation');
    const announced = events.find((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'mediaNode');
    const completed = events.find((e) => e.workflowExecutionUpdateCompletedEventAttributes);
    if (!accepted || !scheduled || !announced || !completed) continue;
    add('accepted -> scheduled', at(scheduled) - at(accepted));
    add('scheduled -> announced', at(announced) - at(scheduled));
    add('announced -> completed', at(completed) - at(announced));
    add('accepted -> completed', at(completed) - at(accepted));
  }
  return steps;
}
