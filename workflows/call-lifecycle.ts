import { allHandlersFinished, condition, executeChild, log, workflowInfo } from '@temporalio/workflow';
import { CONVERSATION_CANCELED_REASON, CONVERSATION_SEQUENCE_END, CONVERSATION_SEQUENCE_START } from '../contracts/conversation';
import { TASK_QUEUES } from '../contracts/task-queues';
import { CALL_REFUSALS, refusalOf, refusalOfRecordedReason, type CallRefusal } from '../contracts/refusals';
import { analyticsWorkflowId } from '../contracts/analytics';
import { analyticsWorkflow } from './analytics';
import { callLength, clockTime, showCallDetails, showCallStatus } from './call-progress';
import { AgentId, Kind, WorkspaceId } from '../contracts/search-attributes';
import type { CallAgent, CallChanges, CallTransferRecord } from '../domain/calls/queue';
import type { CallEventInput } from '../activities/calls/steps';
import { callingWindowOf } from '../contracts/calling-hours';
import {
  QUEUE_EXPIRY_MS,
  type AnswerRequest,
  type AnswerResult,
  type CallState,
  type CallWorkflowInput,
  type HangupRequest,
  type HangupResult,
  type ProviderStatusUpdate,
  type JoinTransferRequest,
  type MediaNodeChoice,
  type TransferProgress,
  type TransferRequest,
  type TransferResult,
} from '../contracts/calls';
import {
  BROWSER_STREAM_WAIT_SECONDS,
  CAP_GRACE_MS,
  CONVERSATION_STOP_WAIT_MS,
  placeDial,
  releasesAfterEnd,
  FINAL_PROVIDER_STATUSES,
  HANGUP_ANSWER_WAIT_MS,
  hangupProviderCall,
  PHONE_STREAM_WAIT_SECONDS,
  PROVIDER_LIMIT_MARGIN_SECONDS,
  startConversation,
  conversationNode,
  pacesDials,
  storeSteps,
  dialTransferLeg,
  hangupTransferLeg,
  joinTransferLegs,
  transferProviderCall,
  type ConversationRun,
  type EventLevel,
} from './call-steps';

/** prepareDial's answer; `refusal` and a null agent only in histories recorded before refusals were typed. */
type RecordedDialCheck = { agent: CallAgent | null; hoursClosed: boolean; refusal?: { reason: string } | null; dialAt?: string; dialsAhead?: number };

/** Who ended a call and why, as `call.ended` says it. */
interface Ending {
  by: string;
  reason: string;
  level: EventLevel;
}

/**
 * A transfer to a person (docs/decisions/0160-0161) as the workflow follows it: the record's
 * `transfer`, and whether the call was handed over to the destination's dial (the conversation
 * then ends and the call stays up, bridged).
 */
interface TransferState {
  record: CallTransferRecord;
  handedOver: boolean;
  /** The dial's end was reported (action URL, or the B leg's hang-up). */
  dialEnded: boolean;
  /** The destination leg's seconds as the provider counted them, once reported. */
  reportedBridgedSeconds: number | null;
  /** Warm: the second leg's provider id, and how it went (answered; its final status). */
  leg: { providerCallId: string; answered: boolean; endedWith: string | null; verdict: 'human' | 'machine' | null } | null;
}

/** Warm: after the leg answered, how long the provider's machine-detection verdict is waited for; none by then is taken for a person. */
const LEG_VERDICT_WAIT_MS = 4_000;

/** Warm: past the ring timeout, how long the second leg may take to report its end (or answer) before the transfer fails. */
const LEG_REPORT_GRACE_MS = 10_000;

/** `DialStatus` of a dial that did not connect, as `call.transfer_failed` names it. */
function transferFailureOf(dialStatus: string): string {
  if (dialStatus === 'no-answer' || dialStatus === 'timeout') return 'no-answer';
  if (dialStatus === 'busy') return 'busy';
  if (dialStatus === 'cancel' || dialStatus === 'canceled') return 'canceled';
  return 'failed';
}

/** How long, after the provider's final status of a transferred call, the dial's own end report is waited for (its bridged seconds). */
const DIAL_REPORT_WAIT_MS = 3_000;

/** A connected call while it is live, and what its end is decided from. */
interface LiveCall {
  agent: CallAgent;
  /** Browser calls have no telephony provider: the conversation's end is the call's end. */
  viaProvider: boolean;
  /** Epoch ms after which the workflow ends the call itself (the cap plus a grace). */
  capAt: number;
  /** Epoch ms the provider reported the call answered; null before. */
  startedAt: number | null;
  hangupSent: boolean;
  /** Our own reason to end it (API hang-up, the cap, the conversation's end), first one wins. */
  endedBy: Ending | null;
  /** The provider's final status, once it came. */
  finalStatus: ProviderStatusUpdate | null;
  /** After the final status: how long the canceled conversation may take to stop. */
  finalWaitUntil: number | null;
  conversation: ConversationRun;
}

/**
 * One call as a small state machine; `callWorkflow` (workflows/call.ts) routes its messages
 * here and runs `run()`. The phases, in order, each a method:
 *
 * | phase                         | method          | leaves for                                   |
 * |-------------------------------|-----------------|----------------------------------------------|
 * | queued / waiting-for-hours    | waitForSlot     | dialling; ended (hang-up, expiry, refusal)   |
 * | dialling (outbound)           | dial            | live; ended (dial refused)                   |
 * | admitted (inbound, browser)   | admitLive       | live; ended (agent deleted)                  |
 * | live                          | followLiveCall  | closing; ended (never connected)             |
 * | closing                       | close           | analytics                                    |
 * | analytics                     | runAnalytics    | ended                                        |
 *
 * A method that ends the call itself answers null (or false); `state` then holds the outcome.
 */
export class CallLifecycle {
  readonly state: CallState;
  private sequence = 0;
  private granted = false;
  private holdsSlot = false;
  /** Enqueued with the slot keeper and not released since (queued or granted). */
  private inKeeperQueue = false;
  private hangupRequest: HangupRequest | null = null;
  private agentWasDeleted = false;
  private readonly statuses: ProviderStatusUpdate[] = [];
  /** The answer waits here for the conversation's media node (no polling of the call record). */
  private mediaNodeUrl: string | null = null;
  /** The media node the API's answer sent the call's audio to (docs/decisions/0165); null: the shared queue's node announces itself. */
  private chosenNode: MediaNodeChoice | null = null;
  /** The agent's webhook URL as the call read it, passed with each event (undefined: the fan-out reads it). */
  private agentWebhookUrl: string | null | undefined = undefined;
  /** The live call, while it is followed (a transfer request needs it). */
  private live: LiveCall | null = null;
  private transfer: TransferState | null = null;
  private readonly transferReports: TransferProgress[] = [];

  constructor(private readonly input: CallWorkflowInput) {
    this.state = { callId: input.callId, phase: 'queued', status: 'queued', grantedAt: null, hangupReason: null, capReason: null, refusal: null };
    if (input.mediaNode) this.nodeChosen(input.mediaNode);
  }

  // ---- messages: the workflow's handlers call these ----

  slotGranted(): void {
    this.granted = true;
  }

  agentDeleted(): void {
    this.agentWasDeleted = true;
  }

  providerStatus(update: ProviderStatusUpdate): void {
    if (update.mediaNode) this.nodeChosen(update.mediaNode);
    this.statuses.push(update);
  }

  private nodeChosen(node: MediaNodeChoice): void {
    this.chosenNode ??= node;
    this.mediaNodeUrl ??= node.url;
  }

  mediaNodeReady(url: string): void {
    this.mediaNodeUrl ??= url;
  }

  async answer(request: AnswerRequest): Promise<AnswerResult> {
    if (request.status) this.statuses.push(request.status);
    const ended = () => this.state.phase === 'ended';
    await condition(() => this.mediaNodeUrl !== null || ended(), Math.max(1, request.waitMs));
    return { mediaNodeUrl: ended() ? null : this.mediaNodeUrl, ended: ended() };
  }

  /**
   * The conversation's `transfer_call` (docs/decisions/0160): cold hands the call to the
   * destination's `<Dial>` and answers `handed-over` (the conversation then ends, and the call
   * stays up while the dial rings and the two talk). One transfer a call.
   */
  async requestTransfer(request: TransferRequest): Promise<TransferResult> {
    const live = this.live;
    if (!live || this.state.phase !== 'live' || live.hangupSent || live.finalStatus || !live.viaProvider) return { outcome: 'failed', reason: 'error' };
    if (this.transfer) return { outcome: 'failed', reason: 'error' };
    const record: CallTransferRecord = {
      destination: request.destination,
      description: request.description,
      mode: request.mode,
      status: 'started',
      reason: null,
      transferred_at: null,
      bridged_seconds: 0,
    };
    this.transfer = { record, handedOver: false, dialEnded: false, reportedBridgedSeconds: null, leg: null };
    if (request.mode === 'warm') return this.dialWarmLeg(request);
    showCallDetails(`transferring (${request.mode}) to ${request.destination}`);
    await this.step({ transfer: record });
    const { transferred } = await transferProviderCall({
      callId: this.input.callId,
      destination: request.destination,
      ringTimeoutSeconds: request.ringTimeoutSeconds,
      timeLimitSeconds: live.agent.maxDurationSeconds,
    }).catch(() => ({ transferred: false }));
    if (!transferred) {
      record.status = 'failed';
      record.reason = 'error';
      await this.step({ transfer: record });
      return { outcome: 'failed', reason: 'error' };
    }
    this.transfer.handedOver = true;
    // The bridged part has no agent to cap it; the dial's own time limit ends it. The workflow's
    // backstop moves past that limit.
    live.capAt = Date.now() + (live.agent.maxDurationSeconds + PROVIDER_LIMIT_MARGIN_SECONDS) * 1000 + CAP_GRACE_MS;
    return { outcome: 'handed-over', reason: null };
  }

  transferProgress(report: TransferProgress): void {
    // Warm, before the join: the second leg's progress, which the transfer's Updates wait for.
    const leg = this.transfer?.leg;
    if (leg && !this.transfer!.handedOver) {
      if (report.event === 'answered') leg.answered = true;
      else if (report.event === 'human' || report.event === 'machine') leg.verdict ??= report.event;
      else leg.endedWith ??= report.status;
      return;
    }
    this.transferReports.push(report);
  }

  /**
   * Warm (docs/decisions/0161): the destination is dialled as a second call from the call's own
   * number, its audio streamed to the call's media node. Answers `answered` once a person picked
   * up (the conversation briefs them, then `joinTransfer`), or `failed` with the reason.
   */
  private async dialWarmLeg(request: TransferRequest): Promise<TransferResult> {
    const transfer = this.transfer!;
    const { input } = this;
    const live = this.live!;
    await this.step({ transfer: transfer.record });
    const ownNumber = input.direction === 'inbound' ? input.toNumber : input.fromNumber;
    const dial = await dialTransferLeg({
      callId: input.callId,
      from: ownNumber,
      to: request.destination,
      mediaNodeUrl: this.mediaNodeUrl ?? '',
      ringTimeoutSeconds: request.ringTimeoutSeconds,
      timeLimitSeconds: live.agent.maxDurationSeconds,
    }).catch((error: Error) => ({ providerCallId: null, refused: error.message }));
    if (!dial.providerCallId) return this.failWarm('failed');
    const leg = { providerCallId: dial.providerCallId, answered: false, endedWith: null as string | null, verdict: null as 'human' | 'machine' | null };
    transfer.leg = leg;
    const callOver = () => live.finalStatus !== null || live.hangupSent || this.statuses.some((s) => FINAL_PROVIDER_STATUSES.has(s.status));
    await condition(() => leg.answered || leg.endedWith !== null || callOver(), request.ringTimeoutSeconds * 1000 + LEG_REPORT_GRACE_MS);
    // Answered: by a person, unless the provider's detection says a machine (a verdict that does not come in time: a person).
    if (leg.answered && leg.endedWith === null && !callOver())
      await condition(() => leg.verdict !== null || leg.endedWith !== null || callOver(), LEG_VERDICT_WAIT_MS);
    if (leg.answered && leg.verdict === 'machine' && leg.endedWith === null) {
      await hangupTransferLeg({ providerCallId: leg.providerCallId }).catch(() => undefined);
      return this.failWarm('machine');
    }
    if (leg.answered && leg.endedWith === null && !callOver()) return { outcome: 'answered', reason: null };
    if (leg.endedWith === null) await hangupTransferLeg({ providerCallId: leg.providerCallId }).catch(() => undefined);
    return this.failWarm(callOver() ? 'canceled' : transferFailureOf(leg.endedWith ?? 'no-answer'));
  }

  /** Warm, after `answered`: joins both legs in the conference room (the agent leaves), or gives up (the leg is hung up). */
  async joinTransfer(request: JoinTransferRequest): Promise<TransferResult> {
    const transfer = this.transfer;
    const live = this.live;
    const leg = transfer?.leg;
    if (!transfer || !leg || !live || transfer.handedOver || transfer.record.status !== 'started') return { outcome: 'failed', reason: 'error' };
    if (!request.join || leg.endedWith !== null || live.finalStatus || live.hangupSent) {
      if (leg.endedWith === null) await hangupTransferLeg({ providerCallId: leg.providerCallId }).catch(() => undefined);
      return this.failWarm(request.join ? (leg.endedWith !== null ? 'canceled' : 'error') : (request.reason ?? 'error'));
    }
    transfer.handedOver = true;
    const { joined } = await joinTransferLegs({ callId: this.input.callId, legProviderCallId: leg.providerCallId }).catch(() => ({ joined: false }));
    if (!joined) {
      // The caller may already be gone: the leg goes too, and the call ends as the provider reports.
      await hangupTransferLeg({ providerCallId: leg.providerCallId }).catch(() => undefined);
      transfer.record.status = 'failed';
      transfer.record.reason = 'error';
      await this.step({ transfer: transfer.record });
      return { outcome: 'failed', reason: 'error' };
    }
    const at = new Date().toISOString();
    transfer.record.status = 'transferred';
    transfer.record.transferred_at = at;
    live.capAt = Date.now() + (live.agent.maxDurationSeconds + PROVIDER_LIMIT_MARGIN_SECONDS) * 1000 + CAP_GRACE_MS;
    showCallDetails(`transferred (warm) to ${transfer.record.destination}: both in the conference`);
    await this.step(
      { transfer: transfer.record },
      this.event('call.transferred', `transferred to ${transfer.record.destination}`, 'info', null, { destination: transfer.record.destination, mode: 'warm' }),
    );
    return { outcome: 'handed-over', reason: null };
  }

  /** A warm transfer that did not happen: the record says why, the agent stays (the conversation writes `call.transfer_failed`). */
  private async failWarm(reason: string): Promise<TransferResult> {
    const transfer = this.transfer!;
    transfer.record.status = 'failed';
    transfer.record.reason = reason;
    await this.step({ transfer: transfer.record });
    return { outcome: 'failed', reason };
  }

  async hangup(request: HangupRequest): Promise<HangupResult> {
    this.hangupRequest ??= request;
    const ended = () => this.state.phase === 'ended';
    if (this.state.phase === 'queued' || this.state.phase === 'waiting-for-hours') await condition(ended);
    else await condition(ended, HANGUP_ANSWER_WAIT_MS);
    return { status: this.state.status };
  }

  // ---- the phases ----

  async run(): Promise<CallState> {
    const agent = this.input.direction === 'outbound' ? await this.queueAndDial() : await this.admitLive();
    if (!agent) return this.state;
    const live = await this.followLiveCall(agent);
    if (!live) return this.state;
    const story = await this.close(live);
    await this.runAnalytics(story);
    return this.state;
  }

  private async queueAndDial(): Promise<CallAgent | null> {
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
  private async waitForSlot(): Promise<CallAgent | null> {
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
  private async waitForDialMoment(dialAt: string, ahead: number): Promise<void> {
    const waitMs = Date.parse(dialAt) - Date.now();
    if (waitMs <= 0 || !pacesDials()) return;
    this.state.phase = 'waiting-to-dial';
    showCallDetails(
      `waiting for the provider's pace: ${ahead} dial${ahead === 1 ? '' : 's'} ahead, dialling ${this.input.toNumber} at ${clockTime(Date.parse(dialAt))}`,
    );
    await condition(() => this.hangupRequest !== null, waitMs);
  }

  /** Dials through the telephony provider (`call.placed`); false when the dial was refused (the call has ended). */
  private async dial(agent: CallAgent): Promise<boolean> {
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
  private async admitLive(): Promise<CallAgent | null> {
    const { input } = this;
    this.holdsSlot = true;
    const live = await storeSteps().loadCallAgent({ workspaceId: input.workspaceId, agentId: input.agentId });
    if (!live) return this.endRefused('AgentDeleted', 'failed');
    this.agentWebhookUrl = live.webhookUrl;
    this.statuses.push({ status: 'in-progress', providerCallId: input.providerCallId ?? '', at: input.queuedAt });
    return live;
  }

  /**
   * Follows the provider's status callbacks to `call.started` and the end, while the
   * conversation runs in the media service; ends the call from our side on an API hang-up,
   * the cap, or the conversation's end. Null when the call never connected (it has ended).
   */
  private async followLiveCall(agent: CallAgent): Promise<LiveCall | null> {
    const { input } = this;
    this.state.phase = 'live';
    const live: LiveCall = {
      agent,
      viaProvider: input.direction !== 'browser',
      capAt: Date.now() + agent.maxDurationSeconds * 1000 + CAP_GRACE_MS,
      startedAt: null,
      hangupSent: false,
      endedBy: null,
      finalStatus: null,
      finalWaitUntil: null,
      conversation: { scope: null, done: false, canceled: false, outcome: null, failure: null, timedOut: false, lastBeatAt: null, liveSince: null },
    };
    const { conversation } = live;
    this.live = live;
    // Handed to a person, or being handed over (the stream may close before the provider has answered the transfer).
    const handedOver = () => this.transfer !== null && (this.transfer.handedOver || this.transfer.record.status === 'started');
    const waiting = () =>
      this.statuses.length > 0 ||
      this.transferReports.length > 0 ||
      (this.hangupRequest !== null && !live.hangupSent) ||
      (conversation.done && !handedOver() && (!live.hangupSent || !live.viaProvider)) ||
      (live.finalStatus !== null && (conversation.done || conversation.scope === null));
    for (;;) {
      if (live.finalStatus && (conversation.done || conversation.scope === null)) break;
      if (!live.viaProvider && conversation.done) break;
      const deadline = live.finalWaitUntil ?? live.capAt;
      const left = deadline - Date.now();
      if (left <= 0) {
        if (live.finalWaitUntil !== null) {
          // The provider says the call is over and the conversation, canceled then, has not
          // stopped: end the call without it.
          log.warn('conversation did not stop when canceled; the call ends without it', { callId: input.callId });
          break;
        }
        if (!live.hangupSent) {
          // The cap passed and the call is still on: end it from our side, whatever the media service does.
          this.stopConversation(live);
          await this.hangUp(live, { by: 'system', reason: this.state.capReason ?? 'max duration reached', level: 'info' });
        }
      }
      if (left > 0) await condition(waiting, left);
      else await condition(waiting);
      const request = this.hangupRequest;
      if (request && !live.hangupSent) {
        await this.hangUp(live, { by: request.by, reason: 'hung up through the API', level: 'info' });
        continue;
      }
      const report = this.transferReports.shift();
      if (report) {
        await this.followTransfer(report);
        continue;
      }
      // The conversation ended (or failed) while the call is still up: end the call. Not when it
      // ended because the call was handed to a person: the provider's dial goes on with it.
      if (conversation.done && !handedOver() && !live.hangupSent && live.startedAt !== null && live.finalStatus === null) {
        const outcome = conversation.outcome;
        if (outcome) await this.hangUp(live, { by: outcome.endedBy, reason: outcome.reason, level: outcome.level });
        else {
          await this.step(
            undefined,
            this.event('error', `the conversation stopped: ${conversation.failure ?? 'unknown failure'}`, 'error', null, { provider: 'media' }),
          );
          await this.hangUp(live, { by: 'system', reason: 'error', level: 'error' });
        }
        continue;
      }
      const update = this.statuses.shift();
      if (!update) continue;
      if (update.status === 'ringing') continue;
      if (update.status === 'in-progress' && live.startedAt === null && live.finalStatus === null) {
        await this.begin(live, update);
        continue;
      }
      if (!FINAL_PROVIDER_STATUSES.has(update.status) || live.finalStatus) continue;
      if (live.startedAt === null) {
        const status = update.status === 'completed' ? 'failed' : (update.status as 'no-answer' | 'busy' | 'failed' | 'canceled');
        return this.endUnconnected(status, `not connected: ${update.status}`, 'warning', live.endedBy?.by ?? 'provider', { plivo: update.status });
      }
      live.finalStatus = update;
      showCallDetails(`the provider ended the call (${update.status}): saving the conversation`);
      // The call is over at the provider (the caller hung up, our hang-up went through, or the
      // conversation ended and closed the stream): stop a conversation still running, also one
      // still waiting for its stream; it saves what it has and returns.
      this.stopConversation(live);
      live.finalWaitUntil = Date.now() + CONVERSATION_STOP_WAIT_MS;
      // The slot is given back when the record is closed (close); histories from before gave it back here.
      if (this.holdsSlot && !releasesAfterEnd()) await this.release();
    }
    return live;
  }

  /**
   * A report of the transfer's dial: the destination answered (`call.transferred`: the record
   * says who took the call), or the dial ended (its bridged seconds; or, never answered,
   * `call.transfer_failed`, and the provider hangs up the call).
   */
  private async followTransfer(report: TransferProgress): Promise<void> {
    const transfer = this.transfer;
    if (!transfer?.handedOver) return;
    const { record } = transfer;
    if (report.event === 'answered') {
      if (record.status !== 'started') return;
      record.status = 'transferred';
      record.transferred_at = report.at;
      showCallDetails(`transferred to ${record.destination}: bridged`);
      await this.step(
        { transfer: record },
        this.event('call.transferred', `transferred to ${record.destination}`, 'info', null, { destination: record.destination, mode: record.mode }),
      );
      return;
    }
    if (report.bridgedSeconds !== undefined) transfer.reportedBridgedSeconds ??= report.bridgedSeconds;
    if (transfer.dialEnded) return;
    transfer.dialEnded = true;
    if (record.status === 'started') {
      record.status = 'failed';
      record.reason = transferFailureOf(report.status);
      showCallDetails(`the transfer to ${record.destination} failed: ${record.reason}`);
      await this.step(
        { transfer: record },
        this.event('call.transfer_failed', `the transfer to ${record.destination} failed: ${record.reason}`, 'warning', null, {
          destination: record.destination,
          mode: record.mode,
          reason: record.reason,
        }),
      );
    }
  }

  /** The call was answered: `call.started` with its cap, and the conversation starts on a media node. */
  private async begin(live: LiveCall, update: ProviderStatusUpdate): Promise<void> {
    const { input } = this;
    const { agent } = live;
    const startedAt = Date.parse(update.at);
    live.startedAt = startedAt;
    this.state.status = 'in-progress';
    // The provider is waiting on the answer URL until the conversation starts: these go together.
    const cap = await storeSteps().beginLiveCall({
      callId: input.callId,
      workspaceId: input.workspaceId,
      maxDurationSeconds: agent.maxDurationSeconds,
      changes: { status: 'in-progress', started_at: update.at, provider_status: update.status },
      event: this.event('call.started', `${input.direction} call with ${agent.name}`, 'info', null, {
        channel: live.viaProvider ? 'phone' : 'browser',
        from: input.fromNumber,
        to: input.toNumber,
        stt: agent.stt,
        llm: agent.llm,
        tts: agent.tts,
        started_by: input.direction === 'browser' ? input.placedBy : '',
        values: input.valueKeys,
      }),
    });
    this.state.capReason = cap.capReason;
    live.capAt = startedAt + cap.capSeconds * 1000 + CAP_GRACE_MS;
    showCallStatus('in-progress', `live since ${clockTime(startedAt)} with ${agent.name}, for at most ${callLength(cap.capSeconds)}`);
    // The node the answer sent the audio to, where the conversation may already be greeting the callee (0165).
    const node = conversationNode(this.chosenNode);
    startConversation(
      live.conversation,
      {
        callId: input.callId,
        workspaceId: input.workspaceId,
        agentId: input.agentId,
        sequenceBase: CONVERSATION_SEQUENCE_START,
        capSeconds: cap.capSeconds,
        capReason: cap.capReason,
        streamWaitSeconds: live.viaProvider ? PHONE_STREAM_WAIT_SECONDS : BROWSER_STREAM_WAIT_SECONDS,
        ...(node ? { nodeChosen: true } : {}),
      },
      node,
    );
    this.sequence = CONVERSATION_SEQUENCE_END;
  }

  /**
   * The end of a connected call: who ended it, the live time charged (billing rule 2), the
   * charge and the closed record with `call.ended`, in one step. Answers the call's story for ops.
   */
  private async close(live: LiveCall): Promise<string> {
    const { input } = this;
    const { conversation, finalStatus } = live;
    const startedAt = live.startedAt!;
    const outcome = conversation.outcome;
    // Our own reason first (API hang-up, the cap), then the conversation's, unless it only ended
    // because we canceled it when the provider said the call was over: then the caller hung up.
    // A conversation that ended `transferred` although the call was never handed over (the caller
    // left while the transfer was asked for): the caller hung up.
    const notTransferred = outcome?.reason === 'transferred' && !this.transfer?.handedOver;
    const conversationEnded =
      outcome && outcome.reason !== CONVERSATION_CANCELED_REASON && !notTransferred
        ? { by: outcome.endedBy, reason: outcome.reason, level: outcome.level }
        : null;
    // A conversation that failed on its own (its media node stopped heartbeating) is an error, even
    // when the provider's final status came first (the stream died with the node).
    const failedOnItsOwn = !outcome && conversation.failure !== null && (conversation.timedOut || !conversation.canceled);
    const failedEnding = failedOnItsOwn ? { by: 'system', reason: 'error', level: 'error' as EventLevel } : null;
    // A warm transfer's second leg still up when the call ends without the join: it goes too.
    const strayLeg = this.transfer && !this.transfer.handedOver ? this.transfer.leg : null;
    if (strayLeg && strayLeg.endedWith === null) await hangupTransferLeg({ providerCallId: strayLeg.providerCallId }).catch(() => undefined);
    const transfer = this.transfer?.handedOver ? this.transfer : null;
    // A call handed to a person ends `transferred` (by the agent) once the person took it; a cold
    // dial nobody took ends the call (docs/decisions/0160).
    const transferEnding: Ending | null = transfer
      ? transfer.record.status === 'transferred'
        ? { by: 'agent', reason: 'transferred', level: 'info' }
        : { by: 'system', reason: 'transfer failed', level: 'warning' }
      : null;
    const ended = live.endedBy ??
      failedEnding ??
      transferEnding ??
      conversationEnded ?? { by: 'caller', reason: 'the caller hung up', level: 'info' as EventLevel };
    if (failedOnItsOwn && !live.endedBy)
      await this.step(undefined, this.event('error', `the conversation stopped: ${conversation.failure}`, 'error', null, { provider: 'media' }));
    // Billing rule 2: charged for the time the agent was live, from the stream's arrival to the
    // conversation's end (or the provider's final status, or a dead node's last heartbeat). A
    // conversation that never got its stream costs nothing.
    const liveFrom = outcome ? Date.parse(outcome.startedAt) : conversation.liveSince;
    const endCandidates = [outcome ? Date.parse(outcome.endedAt) : null, conversation.lastBeatAt, finalStatus ? Date.parse(finalStatus.at) : null].filter(
      (t): t is number => t !== null,
    );
    const endedAtMs = Math.max(startedAt, Math.min(...(endCandidates.length ? endCandidates : [Date.now()])));
    const durationSeconds = liveFrom === null ? 0 : Math.round(Math.max(0, endedAtMs - Math.max(startedAt, liveFrom)) / 100) / 10;
    // Billing of a transfer: the bridged time (the destination leg's seconds as the provider
    // reported them, else from the answer to the provider's final status) at the plan's price,
    // with the live time in the one `call` item (docs/decisions/0160).
    let bridgedSeconds = 0;
    if (transfer?.record.status === 'transferred') {
      // Reports still queued (the final status may come first), then, without the leg's seconds, a short wait for them.
      const takeReports = () => {
        for (const report of this.transferReports.splice(0))
          if (report.event === 'ended' && report.bridgedSeconds !== undefined) transfer.reportedBridgedSeconds ??= report.bridgedSeconds;
      };
      takeReports();
      if (transfer.reportedBridgedSeconds === null && transfer.record.mode === 'cold') {
        await condition(() => this.transferReports.length > 0, DIAL_REPORT_WAIT_MS);
        takeReports();
      }
      const fromAnswer = finalStatus ? Math.max(0, Date.parse(finalStatus.at) - Date.parse(transfer.record.transferred_at!)) / 1000 : 0;
      bridgedSeconds = Math.round((transfer.reportedBridgedSeconds ?? fromAnswer) * 10) / 10;
      transfer.record.bridged_seconds = bridgedSeconds;
    }
    const endedAt = new Date(endedAtMs).toISOString();
    // Charged once, the record closed with its cost, then `call.ended`: one step.
    const { costPaise } = await this.endRecord(this.holdsSlot, () =>
      storeSteps().closeCall({
        callId: input.callId,
        workspaceId: input.workspaceId,
        durationSeconds,
        ...(transfer ? { bridgedSeconds } : {}),
        endedAt,
        changes: {
          status: 'completed',
          ended_at: endedAt,
          duration_seconds: durationSeconds,
          hangup_by: ended.by,
          hangup_reason: ended.reason,
          provider_status: finalStatus?.status ?? 'completed',
          ...(transfer ? { transfer: transfer.record } : {}),
        },
        event: this.event('call.ended', `ended by ${ended.by}: ${ended.reason}`, ended.level === 'error' ? 'error' : 'info', null, {
          duration_seconds: durationSeconds,
          // A number, as the contract types it; whether the agent was heard at all is `agent_spoke`
          // (false when the conversation never went live, null when its media node died and the
          // conversation's outcome is unknown).
          avg_first_audio_ms: outcome?.avgFirstAudioMs ?? 0,
          agent_spoke: outcome ? outcome.avgFirstAudioMs !== null : liveFrom === null ? false : null,
          usage: outcome?.usage ?? { stt_seconds: 0, tts_characters: 0, llm_input_tokens: 0, llm_output_tokens: 0, llm_calls: 0 },
        }),
      }),
    );
    this.state.status = 'completed';
    this.state.hangupReason = ended.reason;
    if (ended.reason === 'voicemail' && outcome?.voicemailAction) this.state.voicemailAction = outcome.voicemailAction;
    this.state.phase = 'ended';
    const story = `completed: live ${callLength(durationSeconds)}${bridgedSeconds ? `, bridged ${callLength(bridgedSeconds)}` : ''}, charged ${costPaise} paise (ended by ${ended.by}: ${ended.reason})`;
    showCallStatus('completed', `${story}; post-call analytics running`);
    log.info('call ended', { callId: input.callId, durationSeconds, costPaise, runId: workflowInfo().runId });
    return story;
  }

  /** Summary and extractions, then `call.completed` (once, from the child, whatever the model does). */
  private async runAnalytics(story: string): Promise<void> {
    const { input } = this;
    await executeChild(analyticsWorkflow, {
      workflowId: analyticsWorkflowId(input.callId),
      taskQueue: TASK_QUEUES.analytics,
      args: [{ callId: input.callId, workspaceId: input.workspaceId, agentId: input.agentId, sequence: this.sequence++ }],
      typedSearchAttributes: [
        { key: WorkspaceId, value: input.workspaceId },
        { key: AgentId, value: input.agentId },
        { key: Kind, value: 'analytics' },
      ],
      staticSummary: `post-call analytics of call ${input.callId}`,
      staticDetails: `Summary and extractions of call \`${input.callId}\` (workflow \`${workflowInfo().workflowId}\`) by the language model, then \`call.completed\`.`,
    });
    showCallDetails(story);
    await condition(allHandlersFinished);
  }

  // ---- the steps the phases share ----

  private leftQueue(): boolean {
    return this.hangupRequest !== null || this.agentWasDeleted;
  }

  /** The next timeline entry's names (the step that writes it adds what it says). */
  private nextEntry() {
    return {
      workspaceId: this.input.workspaceId,
      callId: this.input.callId,
      agentId: this.input.agentId,
      sequence: this.sequence++,
      ...(this.agentWebhookUrl !== undefined ? { agentWebhookUrl: this.agentWebhookUrl } : {}),
    };
  }

  private event(type: string, message: string, level: EventLevel, latencyMs: number | null, data: Record<string, unknown> = {}): CallEventInput {
    return { ...this.nextEntry(), type, message, level, latencyMs, data, createdAt: new Date().toISOString() };
  }

  /** One step: the record's changes, then the event. */
  private step(changes: CallChanges | undefined, entry?: CallEventInput): Promise<void> {
    return storeSteps().recordCallStep({ callId: this.input.callId, changes, event: entry });
  }

  /**
   * The step that makes the record final (`write`), with the slot given back right after it, so
   * that a `ringing` or `in-progress` record always holds a slot (docs/decisions/0164); histories
   * from before gave it back first. `holds`: the keeper has this call (queued, granted or active).
   */
  private async endRecord<T>(holds: boolean, write: () => Promise<T>): Promise<T> {
    const releaseAfter = releasesAfterEnd();
    if (holds && !releaseAfter) await this.release();
    const written = await write();
    if (holds && releaseAfter) await this.release();
    return written;
  }

  private async release(): Promise<void> {
    await storeSteps().releaseSlot({ workspaceId: this.input.workspaceId, callId: this.input.callId });
    this.holdsSlot = false;
    this.inKeeperQueue = false;
  }

  private stopConversation(live: LiveCall): void {
    const { conversation } = live;
    if (!conversation.scope || conversation.done) return;
    conversation.canceled = true;
    conversation.scope.cancel();
  }

  private async hangUp(live: LiveCall, by: Ending): Promise<void> {
    live.endedBy ??= by;
    if (live.hangupSent) return;
    live.hangupSent = true;
    showCallDetails(`hanging up: ${by.reason}`);
    if (live.viaProvider) await hangupProviderCall({ callId: this.input.callId });
    else this.stopConversation(live);
  }

  /** Ends a call that never connected: final status, `call.ended` with the reason as its message. Answers null. */
  private async endUnconnected(
    status: 'canceled' | 'failed' | 'no-answer' | 'busy',
    reason: string,
    level: EventLevel,
    by: string,
    data: Record<string, unknown> = {},
    refusal: CallRefusal | null = null,
  ): Promise<null> {
    // A call still in the keeper's queue leaves it too (`release` also takes queued calls out).
    await this.endRecord(this.holdsSlot || this.granted || this.inKeeperQueue, () => {
      const at = new Date().toISOString();
      this.state.status = status;
      this.state.hangupReason = reason;
      this.state.refusal = refusal;
      return this.step({ status, ended_at: at, hangup_by: by, hangup_reason: reason }, this.event('call.ended', reason, level, null, data));
    });
    showCallStatus(status, `${status}: ${reason}`);
    this.state.phase = 'ended';
    await condition(allHandlersFinished);
    return null;
  }

  /** A call refused at the front of the queue (or whose agent is gone): its status, reason and level by type. */
  private endRefused(refusal: CallRefusal, status: 'canceled' | 'failed' = CALL_REFUSALS[refusal].callStatus): Promise<null> {
    return this.endUnconnected(status, CALL_REFUSALS[refusal].reason, CALL_REFUSALS[refusal].level, 'system', {}, refusal);
  }
}
