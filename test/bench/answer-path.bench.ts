import { callWorkflowId } from '../../contracts/calls';
import { createAgent, postJson, startCallsBenchStack, percentile, type CallsBenchStack } from './calls-stack';
import { describeSilence, type CalleeSilence } from '../support/callee-silence';

export interface AnswerPathBenchResult {
  name: string;
  ok: boolean;
  lines: string[];
}

const ONE_AT_A_TIME_CALLS = 15;
const CONCURRENT_CALLS = 40;
const CONCURRENCY = 20;

/**
 * The callee's silence after answering (docs/decisions/0165): from the answer to the audio stream
 * opening on a media node, and to the first sound of the welcome, as the simulated callee lived
 * them, with calls placed one at a time and then 20 at a time (dials not paced: the worst burst),
 * in one run on the calls bench's stack (API and workers in this process, the media node and the
 * simulators in their own). Beside it, from the call workflows' histories, how long the durable
 * record took to catch up (the answer's signal to the conversation's activity scheduled on the
 * chosen node), which the callee no longer waits for.
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
      const { silences, catchUp } = await answerSilences(stack, agentId, calls, concurrency);
      const toStream = silences.flatMap((s) => (s?.toStreamMs == null ? [] : [s.toStreamMs]));
      const toAudio = silences.flatMap((s) => (s?.toFirstAudioMs == null ? [] : [s.toFirstAudioMs]));
      measured += toAudio.length;
      lines.push(`${concurrency} at a time (${calls} calls):`);
      lines.push(`  ${describeSilence("callee's silence, answer to stream", toStream)}`);
      lines.push(`  ${describeSilence("callee's silence, answer to first audio", toAudio)}`);
      lines.push(
        `  durable record catching up (answer signalled -> conversation scheduled on its node): p50 ${percentile(catchUp, 50).toFixed(0)} ms, p95 ${percentile(catchUp, 95).toFixed(0)} ms`,
      );
    }
    return {
      name: "answer path: the callee's silence from answering to the stream and to the welcome's first sound",
      ok: measured === ONE_AT_A_TIME_CALLS + CONCURRENT_CALLS,
      lines,
    };
  } finally {
    await stack.stop();
  }
}

async function answerSilences(
  stack: CallsBenchStack,
  agentId: string,
  calls: number,
  concurrency: number,
): Promise<{ silences: (CalleeSilence | null)[]; catchUp: number[] }> {
  const numbers = Array.from({ length: calls }, (_, i) => `+9198${String(10_000_000 + concurrency * 1_000 + i)}`);
  await stack.simulators.setCallees(numbers, { kind: 'answer', answerAfterSeconds: 0.2, hangUpAfterSeconds: 3 });
  const ids: string[] = [];
  for (let i = 0; i < calls; i += concurrency) {
    const placed = await Promise.all(
      numbers.slice(i, i + concurrency).map((to) => postJson(stack, '/calls', { agent_id: agentId, to_number: to, from_number: stack.fromNumber })),
    );
    const batch = placed.map((p) => String(p.json.id));
    ids.push(...batch);
    await Promise.all(
      batch.map((id) =>
        stack.client.workflow
          .getHandle(callWorkflowId(id))
          .result()
          .catch(() => undefined),
      ),
    );
  }
  const catchUp: number[] = [];
  for (const id of ids) {
    const events = (await stack.client.workflow.getHandle(callWorkflowId(id)).fetchHistory()).events ?? [];
    const at = (e: (typeof events)[number]) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
    // The answer's signal: the `in-progress` status naming the chosen media node.
    const answered = events.find((e) => {
      const signal = e.workflowExecutionSignaledEventAttributes;
      const data = signal?.signalName === 'providerStatus' ? signal.input?.payloads?.[0]?.data : undefined;
      return data ? Buffer.from(data).toString('utf8').includes('"mediaNode"') : false;
    });
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runConversation');
    if (answered && scheduled) catchUp.push(at(scheduled) - at(answered));
  }
  return { silences: await stack.simulators.silences(numbers), catchUp };
}
