import { ApplicationFailure } from '@temporalio/common';
import { takeDialTurn } from '../../domain/calls/dial-pace';
import { DialRefusedError } from '../../providers/errors';
import type { Telephony } from '../../providers/telephony/types';
import { Call } from '../../db/models/call';
import { Agent } from '../../db/models/agent';
import { MACHINE_DETECTION_TIME_MS } from '../../providers/telephony/callbacks';
import type { DialRequest } from '../../contracts/calls';

export interface TelephonyDeps {
  /** The telephony provider's adapter; absent in workers that never dial. */
  telephony?: Telephony;
  /**
   * The API's public address, where the provider posts status callbacks
   * (`<base>/telephony/calls/{call_id}/status`) and asks what an answered call does
   * (`<base>/telephony/calls/{call_id}/answer`), e.g. `https://api.example.com/api/v1`.
   */
  telephonyCallbackBaseUrl?: string;
  /**
   * New calls a second the telephony account takes (`TELEPHONY_CPS`, docs/decisions/0166), shared
   * by every worker node through the dial pace; absent: dials are not paced (test harnesses only).
   */
  dialsPerSecond?: number;
}

/** How long the provider listens to a warm transfer's leg before judging it human or machine (Plivo's `machine_detection_time`). */
const TRANSFER_LEG_MACHINE_DETECTION_MS = 3_000;

/** Dialling and hanging up through the provider; the call's progress comes back as status callbacks. */
export function createCallTelephonyActivities(deps: TelephonyDeps) {
  const provider = () => {
    if (!deps.telephony || !deps.telephonyCallbackBaseUrl)
      throw ApplicationFailure.nonRetryable('telephony is not configured in this worker (TELEPHONY_BASE_URL, PUBLIC_API_URL)', 'TelephonyNotConfigured');
    return { telephony: deps.telephony, base: deps.telephonyCallbackBaseUrl.replace(/\/$/, '') };
  };
  const placeCall = async (input: DialRequest) => {
    const { telephony, base } = provider();
    const statusUrl = `${base}/telephony/calls/${input.callId}/status`;
    // The call's agent rides in the answer URL (signed by the provider with it), so that the answer
    // can name it to the media node, which then reads the call and its agent at once (0244).
    const answerUrl = `${base}/telephony/calls/${input.callId}/answer${input.agentId ? `?agent_id=${encodeURIComponent(input.agentId)}` : ''}`;
    // Answering-machine detection when the call's agent screens for voicemail (docs/decisions/0158).
    const machineDetection = input.detectVoicemail ? { url: `${base}/telephony/calls/${input.callId}/machine`, timeMs: MACHINE_DETECTION_TIME_MS } : undefined;
    try {
      return await telephony.createCall({
        from: input.from,
        to: input.to,
        answerUrl,
        ringUrl: statusUrl,
        hangupUrl: statusUrl,
        timeLimitSeconds: input.timeLimitSeconds,
        machineDetection,
      });
    } catch (error) {
      if (error instanceof DialRefusedError) throw ApplicationFailure.nonRetryable(error.message, 'DialRefused');
      throw error;
    }
  };
  /** The claimed dial, its outcome written on the call record for a run again to answer (0239). */
  const placeClaimedCall = async (input: DialRequest) => {
    let providerCallId: string;
    try {
      ({ providerCallId } = await placeCall(input));
    } catch (error) {
      await recordDialOutcome(input.callId, { dial_refused_reason: reasonOf(error) });
      throw error;
    }
    const placedAt = new Date();
    await recordDialOutcome(input.callId, { provider_call_id: providerCallId, dial_accepted_at: placedAt });
    return { providerCallId, placedAt: placedAt.toISOString() };
  };
  return {
    /**
     * Asks the provider to dial. A refusal (the provider answered 4xx) fails at once. Creating a
     * call is not idempotent (a timed-out request may still have placed it), so the workflow
     * makes one attempt only and treats any failure as a refused dial. The activity of calls
     * whose histories began before the call-dial-local patch.
     */
    async dialCall(input: { callId: string; from: string; to: string; timeLimitSeconds: number }): Promise<{ providerCallId: string }> {
      return placeCall({ ...input, detectVoicemail: await detectsVoicemail(input.callId) });
    },

    /**
     * The dial as a local activity (docs/decisions/0162): inside the call workflow's task, with
     * no activity task through the server and no workflow task to take its result. A local
     * activity is run again when its workflow task is retried (a worker lost or starved
     * mid-dial, or the task's completion refused), so the dial is first claimed on the call
     * record: a second run never rings the callee again. The first run writes its outcome there,
     * accepted or refused, and a run again answers that outcome (0239).
     * `placedAt` is when the provider accepted the dial (the workflow's clock is the task's start).
     */
    async dialCallOnce(
      input: DialRequest & {
        /** Asked again after this dial answered that an earlier run's dial had no outcome yet (0239): only that outcome is looked up. */
        earlierDialPending?: boolean;
      },
    ): Promise<{ providerCallId: string; placedAt: string } | { retryAt: string; earlierDialPending?: true }> {
      if (!input.earlierDialPending) {
        // The last step of the pace (0166): never sent sooner than one interval after the dial
        // before. Not yet: the workflow waits on a timer and asks again (a local activity does not
        // sleep: a workflow task held open is one a lost server or worker would run twice).
        if (deps.dialsPerSecond) {
          const turn = await takeDialTurn(deps.dialsPerSecond);
          if (turn.retryAt) return { retryAt: turn.retryAt.toISOString() };
        }
        if (await claimDial(input.callId)) return placeClaimedCall(input);
      }
      return outcomeOfEarlierDial(input.callId);
    },

    /**
     * Cold transfer (docs/decisions/0160): hands the answered call to `<Dial>` XML served at
     * `<base>/telephony/calls/{call_id}/transfer/dial?to=...&timeout=...&limit=...` (signed by the provider
     * over that URL, so the route may trust its query). False when the provider no longer holds the call.
     */
    async transferProviderCall(input: {
      callId: string;
      destination: string;
      ringTimeoutSeconds: number;
      timeLimitSeconds: number;
    }): Promise<{ transferred: boolean }> {
      const { telephony, base } = provider();
      const call = await Call.findById(input.callId, { provider_call_id: 1 }).lean();
      if (!call?.provider_call_id) return { transferred: false };
      const query = new URLSearchParams({ to: input.destination, timeout: String(input.ringTimeoutSeconds), limit: String(input.timeLimitSeconds) });
      const alegUrl = `${base}/telephony/calls/${input.callId}/transfer/dial?${query}`;
      return { transferred: await telephony.transferCall(call.provider_call_id, alegUrl) };
    },

    /**
     * Warm transfer (docs/decisions/0161): dials the destination as a second call from the call's
     * own number. Its answer streams to the call's media node as `<call_id>:transfer`; its
     * statuses go to `.../transfer/leg/status`.
     */
    async dialTransferLeg(input: {
      callId: string;
      from: string;
      to: string;
      mediaNodeUrl: string;
      ringTimeoutSeconds: number;
      timeLimitSeconds: number;
    }): Promise<{ providerCallId: string | null; refused: string | null }> {
      const { telephony, base } = provider();
      const statusUrl = `${base}/telephony/calls/${input.callId}/transfer/leg/status`;
      const answerUrl = `${base}/telephony/calls/${input.callId}/transfer/leg/answer?${new URLSearchParams({ node: input.mediaNodeUrl })}`;
      try {
        // The provider's answering-machine detection judges who answered (docs/decisions/0161).
        const machineDetection = { url: `${base}/telephony/calls/${input.callId}/transfer/leg/machine`, timeMs: TRANSFER_LEG_MACHINE_DETECTION_MS };
        const placed = await telephony.createCall({
          from: input.from,
          to: input.to,
          answerUrl,
          ringUrl: statusUrl,
          hangupUrl: statusUrl,
          timeLimitSeconds: input.timeLimitSeconds,
          ringTimeoutSeconds: input.ringTimeoutSeconds,
          machineDetection,
        });
        return { providerCallId: placed.providerCallId, refused: null };
      } catch (error) {
        if (error instanceof DialRefusedError) return { providerCallId: null, refused: error.message };
        throw error;
      }
    },

    /** Warm: re-points both legs (the call and its second leg) at the conference room `<call_id>`. */
    async joinTransferLegs(input: { callId: string; legProviderCallId: string }): Promise<{ joined: boolean }> {
      const { telephony, base } = provider();
      const call = await Call.findById(input.callId, { provider_call_id: 1 }).lean();
      if (!call?.provider_call_id) return { joined: false };
      const url = `${base}/telephony/calls/${input.callId}/transfer/conference`;
      // The second leg first: it waits in the room, and the caller arrives to a person.
      if (!(await telephony.transferCall(input.legProviderCallId, url))) return { joined: false };
      return { joined: await telephony.transferCall(call.provider_call_id, url) };
    },

    /** Hangs up a warm transfer's second leg (idempotent; a leg already over is left alone). */
    async hangupTransferLeg(input: { providerCallId: string }): Promise<void> {
      await provider().telephony.hangupCall(input.providerCallId);
    },

    /** Ends the call at the provider; the final status arrives as a callback. */
    async hangupProviderCall(input: { callId: string }): Promise<void> {
      const { telephony } = provider();
      const call = await Call.findById(input.callId, { provider_call_id: 1 }).lean();
      if (!call?.provider_call_id) return;
      await telephony.hangupCall(call.provider_call_id);
    },
  };
}

/**
 * Claims the call's one dial: true for the first claim, false when a dial was already requested
 * (or the call is gone). An existing claim keeps its time: a run again measures its wait from it.
 */
async function claimDial(callId: string): Promise<boolean> {
  const claimed = await Call.updateOne({ _id: callId, dial_requested_at: null }, { $set: { dial_requested_at: new Date() } });
  return claimed.modifiedCount === 1;
}

/**
 * How long a dial run again waits for the first run's outcome: the dial's own time limit (its
 * `startToCloseTimeout`, 20 s) and a margin. Past it, the first run is taken as lost mid-dial.
 */
const EARLIER_DIAL_OUTCOME_WAIT_MS = 25_000;
/** How often a dial run again looks for the first run's outcome. */
const EARLIER_DIAL_POLL_MS = 1_000;

/**
 * Writes the outcome of the claimed dial for a run again to answer. Never fails the dial: a dial
 * the provider accepted must go on ringing, and without the outcome a run again only waits for it
 * and then refuses the call as unknown, as before 0239.
 */
async function recordDialOutcome(
  callId: string,
  outcome: { provider_call_id: string; dial_accepted_at: Date } | { dial_refused_reason: string },
): Promise<void> {
  try {
    await Call.updateOne({ _id: callId }, { $set: outcome });
  } catch (error) {
    console.error(`call ${callId}: could not record its dial's outcome; a run again of the dial would wait for it`, error);
  }
}

/** The reason a dial failed as the workflow shows it: an activity's failure carries its error's message. */
function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The outcome of a dial claimed by an earlier run of this local activity (docs/decisions/0239).
 * Its workflow task was retried while the first run was dialling or after it: a worker starved
 * past the task's timeout, or a completion the server refused. Accepted: its provider call id,
 * and the call goes on ringing. Refused: the same refusal, at once. Not yet known: ask again in
 * a moment. No outcome within the dial's own time limit: the first run was lost mid-dial, and
 * the call is refused rather than rung twice.
 */
async function outcomeOfEarlierDial(callId: string): Promise<{ providerCallId: string; placedAt: string } | { retryAt: string; earlierDialPending: true }> {
  const call = await Call.findById(callId, { provider_call_id: 1, dial_requested_at: 1, dial_accepted_at: 1, dial_refused_reason: 1 }).lean<{
    provider_call_id?: string | null;
    dial_requested_at?: Date | null;
    dial_accepted_at?: Date | null;
    dial_refused_reason?: string | null;
  }>();
  if (call?.provider_call_id) return { providerCallId: call.provider_call_id, placedAt: (call.dial_accepted_at ?? new Date()).toISOString() };
  if (call?.dial_refused_reason) throw ApplicationFailure.nonRetryable(call.dial_refused_reason, 'DialRefused');
  const now = Date.now();
  if (call?.dial_requested_at && now - call.dial_requested_at.getTime() < EARLIER_DIAL_OUTCOME_WAIT_MS)
    return { retryAt: new Date(now + EARLIER_DIAL_POLL_MS).toISOString(), earlierDialPending: true };
  throw ApplicationFailure.nonRetryable('a dial was already requested for this call (a worker stopped during it); its outcome is unknown', 'DialRefused');
}

/**
 * Whether the call's agent detects voicemail (`call.voicemail.detect`), read here for the calls
 * dialled by the `dialCall` activity (histories from before the call-dial-local patch); the
 * local dial takes it from the agent the workflow already read (docs/decisions/0158, 0162).
 * A failed read dials without the provider's detection (the dial is made once, and must not
 * fail for it): the transcript backstop still screens the call.
 */
async function detectsVoicemail(callId: string): Promise<boolean> {
  try {
    const call = await Call.findById(callId, { agent_id: 1 }).lean();
    if (!call?.agent_id) return false;
    const agent = await Agent.findById(call.agent_id, { 'call.voicemail': 1 }).lean<{ call?: { voicemail?: { detect?: boolean } } }>();
    return agent?.call?.voicemail?.detect === true;
  } catch (error) {
    console.error(`call ${callId}: could not read whether its agent detects voicemail; dialling without machine detection`, error);
    return false;
  }
}
