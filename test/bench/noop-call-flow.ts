import { randomInt } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { answerCall, announceMediaNode, releaseSlot, signalKeeper, signalProviderStatus, startCallWorkflow } from '../../domain/calls/temporal';
import { registerNamespaceAndSearchAttributes } from '../../scripts/infra/temporal-cluster';
import { bundleWorkflows, TESTING_WORKFLOWS_PATH } from '../../workers/bootstrap';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { callWorkflowId, type CallWorkflowInput } from '../../contracts/calls';
import type { ConversationInput, ConversationOutcome } from '../../contracts/conversation';
import type { CallAgent } from '../../domain/calls/queue';
import { enqueueSignal, slotKeeperId } from '../../contracts/slots';
import { cpuSampler, sample, temporalWork, type Cost, type ProcessRoles } from './cost';
import { testEncryption } from '../support/payload-keys';

/**
 * Issue 18's baseline for calls: the same call flow with every activity a no-op. The real call
 * workflow (workflows/call.ts), the real slot keeper and the real analytics child run on the
 * bench's Temporal server, in a namespace of their own (the flow's task queues have fixed names),
 * with activities that read and write nothing and call no provider. What stays is what the flow
 * itself costs in Temporal: the call's workflow and its tasks, the keeper's signals, the
 * provider's answer as an update and its statuses as signals, the conversation as a
 * heartbeating activity on the media queue, the analytics child. So CPU per call here is the
 * floor for our call flow on this server, and ours / this is what our own work adds.
 *
 * Where the no-ops stand in for outside parties: the dial answers the call at once (the
 * provider's answer update, as the API sends it), the conversation announces its node,
 * heartbeats every second for the conversation's length and ends (`end_call`), and the
 * hang-up reports the provider's `completed` status, as the provider's callback would.
 */

const NAMESPACE = 'bench-noop-calls';
const HEARTBEAT_MS = 1_000;
const AGENT: CallAgent = {
  name: 'no-op agent',
  status: 'active',
  hours: { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' },
  maxDurationSeconds: 300,
  stt: 'none/none',
  llm: 'none/none',
  tts: 'none/none',
  webhookUrl: null,
};

export interface NoopCallFlowResult {
  cost: Cost;
  finished: number;
  wallSeconds: number;
}

/**
 * Runs `calls` no-op calls through a workspace limit of `limit`, each conversation lasting
 * `conversationSeconds`, and answers what they cost (CPU by process over the run, Temporal
 * work per call workflow from a sample of histories).
 */
export async function runNoopCallFlow(options: {
  temporalAddress: string;
  roles: ProcessRoles;
  calls: number;
  limit: number;
  conversationSeconds: number;
  sampleWorkflows: number;
}): Promise<NoopCallFlowResult> {
  await registerNamespaceAndSearchAttributes(options.temporalAddress, NAMESPACE);
  const connection = await NativeConnection.connect({ address: options.temporalAddress, plugins: [testEncryption.plugin] });
  const clientConnection = await Connection.connect({ address: options.temporalAddress, plugins: [testEncryption.plugin] });
  const client = new Client({ connection: clientConnection, namespace: NAMESPACE });
  const workspaceId = `ws_noop_${randomInt(1e9)}`;
  const activities = noopActivities(client, options);
  const workflowBundle = await bundleWorkflows(TESTING_WORKFLOWS_PATH);
  const workers = await Promise.all(
    [TASK_QUEUES.calls, TASK_QUEUES.media, TASK_QUEUES.analytics].map((taskQueue) =>
      Worker.create({ connection, namespace: NAMESPACE, taskQueue, workflowBundle, activities }),
    ),
  );
  const running = Promise.all(workers.map((worker) => worker.run()));
  try {
    const cpu = cpuSampler(options.roles);
    const started = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < options.calls; i++) {
      const callId = `noop_${randomInt(1e9)}_${i}`;
      ids.push(callId);
      const input: CallWorkflowInput = {
        callId,
        workspaceId,
        agentId: 'agent_noop',
        direction: 'outbound',
        queuedAt: new Date().toISOString(),
        placedBy: 'key:bench',
        toNumber: `+9198${String(i).padStart(8, '0')}`,
        fromNumber: '+918000000000',
        valueKeys: [],
      };
      await startCallWorkflow(client, input, AGENT.name, 'queued');
    }
    const results = await Promise.allSettled(ids.map((id) => client.workflow.getHandle(callWorkflowId(id)).result()));
    const wallSeconds = (Date.now() - started) / 1000;
    const cost: Cost = { units: options.calls, cpu: cpu.stop() };
    cost.temporal = await temporalWork(client, sample(ids, options.sampleWorkflows).map(callWorkflowId));
    return { cost, finished: results.filter((r) => r.status === 'fulfilled').length, wallSeconds };
  } finally {
    await client.workflow
      .getHandle(slotKeeperId(workspaceId))
      .terminate('benchmark over')
      .catch(() => undefined);
    workers.forEach((worker) => worker.shutdown());
    await running;
    await connection.close();
    await clientConnection.close();
  }

  function noopActivities(temporal: Client, run: { limit: number; conversationSeconds: number }) {
    const enqueue = (input: { workspaceId: string; callId: string; queuedAt: string }) =>
      signalKeeper(temporal, input.workspaceId, { signal: enqueueSignal, args: [{ callId: input.callId, queuedAt: input.queuedAt }] });
    // The provider: accepts the dial and answers the call at once (its answer request is an update).
    const dial = (input: { callId: string }) => {
      const providerCallId = `pc_${input.callId}`;
      void answerCall(temporal, input.callId, { status: { status: 'in-progress', providerCallId, at: new Date().toISOString() }, waitMs: 10_000 }).catch(
        () => undefined,
      );
      return { providerCallId };
    };
    return {
      // The call's store steps: nothing read or written; the keeper's signals stay (they are the flow's).
      recordCallStep: async () => undefined,
      queueCall: async (input: { callId: string; workspaceId: string; queuedAt: string }) => {
        await enqueue(input);
        return { position: 0, agent: AGENT, enqueued: true };
      },
      prepareDial: async () => ({ agent: AGENT, hoursClosed: false }),
      beginLiveCall: async () => ({ capSeconds: AGENT.maxDurationSeconds, capReason: 'max duration reached' as const }),
      closeCall: async () => ({ costPaise: 0 }),
      loadCallAgent: async () => AGENT,
      enqueueCall: enqueue,
      releaseSlot: (input: { workspaceId: string; callId: string }) => releaseSlot(temporal, input.workspaceId, input.callId),
      dialCall: async (input: { callId: string }) => dial(input),
      // The dial as the local activity of calls since the call-dial-local patch: no claim written.
      dialCallOnce: async (input: { callId: string }) => ({ ...dial(input), placedAt: new Date().toISOString() }),
      hangupProviderCall: async (input: { callId: string }) => {
        await signalProviderStatus(temporal, input.callId, {
          status: 'completed',
          providerCallId: `pc_${input.callId}`,
          at: new Date().toISOString(),
          durationSeconds: run.conversationSeconds,
        });
      },
      // The media node: announces itself, heartbeats through the conversation, ends it.
      runConversation: async (input: ConversationInput): Promise<ConversationOutcome> => {
        const context = Context.current();
        await announceMediaNode(temporal, input.callId, 'ws://noop.invalid');
        const startedAt = new Date();
        for (let beat = 0; beat < (run.conversationSeconds * 1000) / HEARTBEAT_MS; beat++) {
          context.heartbeat({ phase: 'live', at: Date.now(), liveSince: startedAt.getTime(), nextSequence: input.sequenceBase });
          await context.sleep(HEARTBEAT_MS);
        }
        const usage = { stt_seconds: 0, tts_characters: 0, llm_input_tokens: 0, llm_output_tokens: 0, llm_calls: 0 };
        return {
          endedBy: 'agent',
          reason: 'end_call',
          level: 'info',
          startedAt: startedAt.toISOString(),
          endedAt: new Date().toISOString(),
          usage,
          avgFirstAudioMs: null,
          nextSequence: input.sequenceBase,
        };
      },
      // Post-call analytics: no model, nothing saved.
      analyzeCall: async () => ({ summary: null, extracted: null }),
      completeCall: async () => ({ eventId: '' }),
      // The slot keeper's reads.
      concurrencyLimitOf: async () => run.limit,
      endedCalls: async () => [] as string[],
    };
  }
}
