import { condition } from '@temporalio/workflow';
import { refusalOf, refusalOfRecordedReason } from '../contracts/refusals';
import { clockTime, showCallDetails, showCallStatus } from './call-progress';
import type { CallAgent } from '../contracts/calls';
import { callingWindowOf } from '../contracts/calling-hours';
import { QUEUE_EXPIRY_MS } from '../contracts/calls';
import { placeDial, PROVIDER_LIMIT_MARGIN_SECONDS, pacesDials, storeSteps } from './call-steps';
import { CallRecord } from './call-record';

/** prepareDial's answer; `refusal` and a null agent only in histories recorded before refusals were typed. */
type RecordedDialCheck = { agent: CallAgent | null; hoursClosed: boolean; refusal?: { reason: string } | null; dialAt?: string; dialsAhead?: number };

/** The phases before a call is live: an outbound call's queue and dial, an inbound or browser call's admission. */
export abstract class CallQueuePhase extends CallRecord {
  protected async queueAndDial(): Promise<CallAgent | null> {
    const agent = await this.waitForSlot();
    if (!agent) return null;
    this.agentWebhookUrl = agent.webhookUrl;
    return (await this.dial(agent)) ? agent : null;
  }

  /**
   * An outbound call from `call.queued` until it holds a slot and may be dialled: waits for its
   * agent's calling hours, then for a slot from the workspace's slot keeper (oldest first);
   * checks credits and the agent at the front (`call.dequeued`). 24 hours in the queue cancel it.
   */
  protected async waitForSlot(): Promise<CallAgent | null> {
    const { input } = this;
    // `call.queued`, the agent, and (its hours open) the keeper's queue, in one step.
    const queued = await storeSteps().queueCall({
      callId: input.callId,
      workspaceId: input.workspaceId,
      agentId: input.agentId,
      queuedAt: input.queuedAt,
      placedBy: input.placedBy,
      event: this.nextEntry(),
      at: new Date().toISOString(),
      toNumber: input.toNumber,
    });
    this.inKeeperQueue = queued.enqueued;
    if (queued.enqueued) showCallDetails(`queued at position ${queued.position}, waiting for a free slot`);
    /** The agent as read at the start of the next round of the queue (read once here for the first). */
    let read: CallAgent | null | undefined = queued.agent;
    const expiresAt = Date.parse(input.queuedAt) + QUEUE_EXPIRY_MS;
    for (;;) {
      if (this.hangupRequest) return this.endUnconnected('canceled', 'canceled while queued', 'info', this.hangupRequest.by);
      if (this.agentWasDeleted) return this.endRefused('AgentDeleted');
      const left = expiresAt - Date.now();
      if (left <= 0) return this.endUnconnected('canceled', 'expired in queue', 'warning', 'system');
      const agent = read === undefined ? await storeSteps().loadCallAgent({ workspaceId: input.workspaceId, agentId: input.agentId }) : read;
      read = undefined;
      if (!agent) return this.endRefused('AgentDeleted');
      if (!this.inKeeperQueue) {
        // The agent's hours, and India's for a +91 number when the workspace keeps them (0207): data
        // the agent's step answers, so recorded histories (without it) wait as they did.
        const window = callingWindowOf(new Date(), agent, input.toNumber);
        if (!window.open) {
          this.state.phase = 'waiting-for-hours';
          showCallDetails(`queued, waiting for ${agent.name}'s calling hours (open at ${clockTime(Date.now() + window.opensInMs)})`);
          await condition(() => this.leftQueue(), Math.min(window.opensInMs, left));
          continue;
        }
        await storeSteps().enqueueCall({ workspaceId: input.workspaceId, callId: input.callId, queuedAt: input.queuedAt });
        this.inKeeperQueue = true;
        showCallDetails('queued, waiting for a free slot (calling hours open)');
      }
      this.state.phase = 'queued';
      await condition(() => this.granted || this.leftQueue(), left);
      // A hang-up, a deleted agent or the expiry (this wait lasted until it) end the call at the top of the loop.
      if (!this.granted || this.leftQueue()) continue;
      this.holdsSlot = true;
      // The sequence is taken only if the step writes `call.dequeued` (no gap on the timeline otherwise).
      const dequeueEntry = { workspaceId: input.workspaceId, callId: input.callId, agentId: input.agentId, sequence: this.sequence };
      const at = new Date().toISOString();
      let check: RecordedDialCheck;
      try {
        // The number goes with the check (the do-not-call list, 0205): an argument, not a command, so histories replay as they were.
        check = await storeSteps().prepareDial({
          callId: input.callId,
          workspaceId: input.workspaceId,
          agentId: input.agentId,
          queuedAt: input.queuedAt,
          event: dequeueEntry,
          at,
          toNumber: input.toNumber,
        });
      } catch (error) {
        const refusal = refusalOf(error);
        if (!refusal) throw error;
        return this.endRefused(refusal);
      }
      // Histories recorded before refusals were typed: the activity answered them as text.
      const recorded = refusalOfRecordedReason(check.refusal?.reason);
      if (recorded) return this.endRefused(recorded);
      if (!check.agent) return this.endRefused('AgentDeleted');
      // Hours may have closed, or changed, while the call waited for its slot: give the slot back and wait again.
      if (check.hoursClosed) {
        await this.release();
        this.granted = false;
        continue;
      }
      this.sequence++;
      this.state.grantedAt = at;
      if (check.dialAt) await this.waitForDialMoment(check.dialAt, check.dialsAhead ?? 0);
      return check.agent;
    }
  }

  /**
   * The account's dial pace (docs/decisions/0166): a call whose moment is later waits for it on a
   * durable timer, holding its slot, with the wait in its current details. A hang-up meanwhile
   * ends it before the dial (the dial's phase sees it).
   */
  protected async waitForDialMoment(dialAt: string, ahead: number): Promise<void> {
    const waitMs = Date.parse(dialAt) - Date.now();
    if (waitMs <= 0 || !pacesDials()) return;
    this.state.phase = 'waiting-to-dial';
    showCallDetails(
      `waiting for the provider's pace: ${ahead} dial${ahead === 1 ? '' : 's'} ahead, dialling ${this.input.toNumber} at ${clockTime(Date.parse(dialAt))}`,
    );
    await condition(() => this.hangupRequest !== null, waitMs);
  }

  /** Dials through the telephony provider (`call.placed`); false when the dial was refused (the call has ended). */
  protected async dial(agent: CallAgent): Promise<boolean> {
    const { input } = this;
    // Hung up while it waited for its dial's moment: it never rings.
    if (this.hangupRequest && pacesDials()) return (await this.endUnconnected('canceled', 'canceled before the dial', 'info', this.hangupRequest.by)) ?? false;
    this.state.phase = 'dialling';
    showCallDetails(`dialling ${input.toNumber} from ${input.fromNumber}`);
    const placed = await placeDial({
      callId: input.callId,
      from: input.fromNumber,
      to: input.toNumber,
      timeLimitSeconds: agent.maxDurationSeconds + PROVIDER_LIMIT_MARGIN_SECONDS,
      detectVoicemail: agent.detectsVoicemail === true,
      agentId: input.agentId,
    }).catch((error: Error) => ({ refused: error.cause instanceof Error ? error.cause.message : error.message }));
    if ('refused' in placed) {
      await this.endUnconnected('failed', `dial refused: ${placed.refused}`, 'error', 'system');
      return false;
    }
    this.state.status = 'ringing';
    const event = this.event('call.placed', 'the provider accepted the dial request', 'info', null);
    await this.step({ provider_call_id: placed.providerCallId, status: 'ringing' }, placed.placedAt ? { ...event, createdAt: placed.placedAt } : event);
    showCallStatus('ringing', `ringing ${input.toNumber}`);
    return true;
  }

  /** Inbound and browser calls were admitted live (the API took their slot): they begin at call.started. */
  protected async admitLive(): Promise<CallAgent | null> {
    const { input } = this;
    this.holdsSlot = true;
    const live = await storeSteps().loadCallAgent({ workspaceId: input.workspaceId, agentId: input.agentId });
    if (!live) return this.endRefused('AgentDeleted', 'failed');
    this.agentWebhookUrl = live.webhookUrl;
    this.statuses.push({ status: 'in-progress', providerCallId: input.providerCallId ?? '', at: input.queuedAt });
    return live;
  }
}
