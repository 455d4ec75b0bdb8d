import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { callWorkflowId } from '../../contracts/calls';
import { slotKeeperId } from '../../contracts/slots';
import { testEncryption } from '../support/payload-keys';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** One slot handoff, hop by hop (milliseconds from the freed call's end). */
export interface HandoffHops {
  /** The freed call's end (its record's `ended_at`) to the provider's final status reaching its workflow. */
  finalStatus: number;
  /** That signal to the keeper's `release` signal (the freeing call's workflow tasks until its record is closed, then its release step: docs/decisions/0164). */
  release: number;
  /** The keeper's `release` signal to its workflow task that granted the slot, completed. */
  keeper: number;
  /** The keeper's grant to the granted call's `slotGranted` signal. */
  grantSignal: number;
  /** `slotGranted` to the granted call's `call.placed` (its workflow task, the pre-dial checks, the dial). */
  dial: number;
  total: number;
}

const at = (event: HistoryEvent) => Number(event.eventTime!.seconds) * 1000 + Math.floor((event.eventTime!.nanos ?? 0) / 1e6);

/**
 * Where the handoffs of one workspace's queue spent their time, from the histories: the
 * keeper's history says which release led to which grant (the `release` signals in the
 * workflow task that signalled `slotGranted` to a call); the two calls' histories and records
 * give the rest. `calls` maps a call id to its `ended_at` and its `call.placed` time.
 */
export async function handoffHops(client: Client, workspaceId: string, calls: Map<string, { endedAt?: number; placedAt?: number }>): Promise<HandoffHops[]> {
  const keeper = await runsOf(client, slotKeeperId(workspaceId));
  const hops: HandoffHops[] = [];
  const historyOf = new Map<string, HistoryEvent[]>();
  const callHistory = async (callId: string) => {
    let events = historyOf.get(callId);
    if (!events) historyOf.set(callId, (events = (await client.workflow.getHandle(callWorkflowId(callId)).fetchHistory()).events ?? []));
    return events;
  };
  for (const events of keeper) {
    // Releases not yet matched to a grant, oldest first: those a workflow task has seen, and
    // those that arrived since the last task started (a grant may come tasks later, when the
    // keeper waited for earlier grants' acknowledgements).
    const seen: { callId: string; at: number }[] = [];
    let arriving: { callId: string; at: number }[] = [];
    for (const event of events) {
      const signal = event.workflowExecutionSignaledEventAttributes;
      if (signal?.signalName === 'release') {
        const payload = signal.input?.payloads?.[0];
        const callId = payload ? (defaultPayloadConverter.fromPayload(testEncryption.codec.decrypt(payload)) as { callId?: string }).callId : undefined;
        if (callId) arriving.push({ callId, at: at(event) });
      }
      if (event.workflowTaskStartedEventAttributes) {
        seen.push(...arriving);
        arriving = [];
      }
      const grant = event.signalExternalWorkflowExecutionInitiatedEventAttributes;
      if (!grant || grant.signalName !== 'slotGranted' || seen.length === 0) continue;
      // The oldest release not yet matched freed the slot this grant hands over.
      const freed = seen.shift()!;
      const grantedId = grant.workflowExecution?.workflowId?.replace(/^call-/, '');
      const freedCall = calls.get(freed.callId);
      const grantedCall = grantedId ? calls.get(grantedId) : undefined;
      if (!grantedId || freedCall?.endedAt === undefined || grantedCall?.placedAt === undefined) continue;
      const freedEvents = await callHistory(freed.callId);
      const finalStatus = freedEvents.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'providerStatus' && at(e) <= freed.at).pop();
      const grantedEvents = await callHistory(grantedId);
      const granted = grantedEvents.find((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'slotGranted');
      if (!finalStatus || !granted) continue;
      const grantedAt = at(event);
      hops.push({
        finalStatus: at(finalStatus) - freedCall.endedAt,
        release: freed.at - at(finalStatus),
        keeper: grantedAt - freed.at,
        grantSignal: at(granted) - grantedAt,
        dial: grantedCall.placedAt - at(granted),
        total: grantedCall.placedAt - freedCall.endedAt,
      });
    }
  }
  return hops;
}

/** Every run of a workflow that continues as new, oldest first. */
async function runsOf(client: Client, workflowId: string): Promise<HistoryEvent[][]> {
  const runs: HistoryEvent[][] = [];
  let runId: string | undefined;
  for (;;) {
    const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    runs.unshift(events);
    const previous = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!previous) return runs;
    runId = previous;
  }
}
