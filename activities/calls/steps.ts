import type { Client } from '@temporalio/client';
import { callingWindowOf } from '../../contracts/calling-hours';
import { enqueueSignal } from '../../contracts/slots';
import type { Clock } from '../clock';
import { recordEvent, type RecordEventInput } from '../../domain/webhooks/fan-out';
import { callCapOf, chargeLedgerForCall, type CallCap } from '../../domain/calls/charging';
import { signalKeeper } from '../../domain/calls/temporal';
import { dialRefusalOf, queuePositionOf, readCallAgent, writeCallChanges, type CallAgent, type CallChanges } from '../../domain/calls/queue';
import { callRefusalFailure } from '../../contracts/refusals';
import { takeDialMoment } from '../../domain/calls/dial-pace';
import { Call } from '../../db/models/call';
import { metrics } from '../../domain/shared/metrics';
import { prepareWelcomeWhileRinging } from '../../domain/calls/prepared-welcome';
import type { Synthesizer } from '../../providers/tts/types';

/**
 * The call workflow's steps, each one activity: a step writes the call record and then puts
 * the event on the timeline (so that whoever the event reaches finds the record already
 * saying it). One activity a step instead of one a write: every activity is a round trip
 * through Temporal and a workflow task, and at 50 calls at once those round trips were most
 * of the work. Each step is safe to retry: record writes set fields, events are keyed by
 * their sequence, the charge by the call.
 */

/** A timeline entry as the workflow names it (its time is workflow time, as every time the workflow decides on). */
export type CallEventInput = RecordEventInput;
/** The names of the next timeline entry, for a step that decides what the entry says. */
export type CallEventSlot = Pick<RecordEventInput, 'workspaceId' | 'callId' | 'agentId' | 'sequence'>;

/** The number a call dials: given by the workflow, or (workflows that ran before it passed it) read from the record. */
async function toNumberOf(input: { callId: string; toNumber?: string }): Promise<string | undefined> {
  if (input.toNumber) return input.toNumber;
  return (await Call.findById(input.callId, { to_number: 1 }).lean<{ to_number?: string | null }>())?.to_number ?? undefined;
}

export interface CallStepDeps {
  clock: Clock;
  temporal?: Client;
  /** New calls a second the telephony account takes (TelephonyDeps). */
  dialsPerSecond?: number;
  /** Speech synthesis, for a welcome with the call's own values prepared while it rings (docs/decisions/0228); absent: the media node synthesizes it. */
  synthesizer?: Synthesizer;
}

export function createCallStepActivities(deps: CallStepDeps) {
  const temporal = () => {
    if (!deps.temporal) throw new Error('the call steps need a Temporal client in the worker dependencies');
    return deps.temporal;
  };
  const record = (event: CallEventInput) => recordEvent(event, { temporal: temporal(), now: () => deps.clock.now() });
  const write = (callId: string, changes: CallChanges | undefined, extra?: Record<string, unknown>) =>
    changes || extra ? writeCallChanges(callId, changes ?? {}, deps.clock.now(), extra) : Promise.resolve();

  return {
    /** Writes the record's changes, then the event (either may be absent). */
    async recordCallStep(input: { callId: string; changes?: CallChanges; event?: CallEventInput }): Promise<void> {
      await write(input.callId, input.changes);
      if (input.event) await record(input.event);
    },

    /**
     * A placed call joins the queue: `call.queued` with its position and who placed it, and
     * the agent as it is now (null when deleted). When the agent's calling hours are open at
     * `at` (the workflow's time), the call also joins the slot keeper's queue (`enqueued`);
     * otherwise the workflow waits for the hours first.
     */
    async queueCall(input: {
      callId: string;
      workspaceId: string;
      agentId: string;
      queuedAt: string;
      placedBy: string;
      event: CallEventSlot;
      at: string;
      toNumber?: string;
    }): Promise<{ position: number; agent: CallAgent | null; enqueued: boolean }> {
      const [position, agent, toNumber] = await Promise.all([
        queuePositionOf(input.workspaceId, new Date(input.queuedAt)),
        readCallAgent(input.workspaceId, input.agentId),
        toNumberOf(input),
      ]);
      await record({
        ...input.event,
        type: 'call.queued',
        message: `queued at position ${position}`,
        level: 'info',
        latencyMs: null,
        data: { position, by: input.placedBy },
        createdAt: input.at,
        ...(agent ? { agentWebhookUrl: agent.webhookUrl ?? null } : {}),
      });
      const enqueued = agent !== null && callingWindowOf(new Date(input.at), agent, toNumber).open;
      if (enqueued) await signalKeeper(temporal(), input.workspaceId, { signal: enqueueSignal, args: [{ callId: input.callId, queuedAt: input.queuedAt }] });
      return { position, agent, enqueued };
    },

    /**
     * A call holding a slot, before its dial: the checks made at the front (credits, the agent,
     * the workspace), then the agent's calling hours at `at` (the workflow's time). When it
     * may be dialled: `dequeued_at` and `call.dequeued` (latency = the wait since it was placed).
     * A refusal is a non-retryable failure of its CallRefusal type (contracts/refusals.ts).
     */
    async prepareDial(input: {
      callId: string;
      workspaceId: string;
      agentId: string;
      queuedAt: string;
      event: CallEventSlot;
      at: string;
      toNumber?: string;
    }): Promise<{ agent: CallAgent; hoursClosed: boolean; dialAt?: string; dialsAhead?: number }> {
      // The number is checked against the do-not-call list here too (0205): it may have been listed while the call waited.
      const toNumber = await toNumberOf(input);
      const { refusal, agent } = await dialRefusalOf(input.workspaceId, input.agentId, toNumber);
      if (refusal) throw callRefusalFailure(refusal);
      if (!callingWindowOf(new Date(input.at), agent, toNumber).open) return { agent, hoursClosed: true };
      metrics.slotWait.observe(Math.max(0, Date.parse(input.at) - Date.parse(input.queuedAt)) / 1000);
      // The welcome with the callee's values, synthesized while the phone rings (0228); not waited for:
      // a failure, or a callee quicker than the speech server, only means the media node synthesizes it.
      if (deps.synthesizer) void prepareWelcomeWhileRinging(input.callId, input.agentId, deps.synthesizer, deps.clock.now()).catch(() => undefined);
      // The dial's moment at the account's pace (0166), taken once the call may be dialled.
      const [moment] = await Promise.all([
        deps.dialsPerSecond ? takeDialMoment(deps.dialsPerSecond, deps.clock.now()) : null,
        write(input.callId, { dequeued_at: input.at }).then(() =>
          record({
            ...input.event,
            type: 'call.dequeued',
            message: 'a slot is free: dialling',
            level: 'info',
            latencyMs: Date.parse(input.at) - Date.parse(input.queuedAt),
            data: {},
            createdAt: input.at,
            agentWebhookUrl: agent.webhookUrl ?? null,
          }),
        ),
      ]);
      return { agent, hoursClosed: false, ...(moment ? { dialAt: moment.at.toISOString(), dialsAhead: moment.ahead } : {}) };
    },

    /** The call is answered: the record goes in-progress, `call.started`, and the length it may last (callCapOf). */
    async beginLiveCall(input: {
      callId: string;
      workspaceId: string;
      maxDurationSeconds: number;
      changes: CallChanges;
      event: CallEventInput;
    }): Promise<CallCap> {
      const [cap] = await Promise.all([
        callCapOf(input.workspaceId, input.maxDurationSeconds),
        write(input.callId, input.changes).then(() => record(input.event)),
      ]);
      return cap;
    },

    /** A connected call's end: charged once, the record closed with its cost, then `call.ended`. */
    async closeCall(input: {
      callId: string;
      workspaceId: string;
      durationSeconds: number;
      bridgedSeconds?: number;
      endedAt: string;
      changes: CallChanges;
      event: CallEventInput;
    }): Promise<{ costPaise: number }> {
      const { costPaise } = await chargeLedgerForCall(input);
      await write(input.callId, input.changes, { cost_paise: costPaise });
      await record(input.event);
      return { costPaise };
    },
  };
}
