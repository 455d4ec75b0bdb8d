import { allHandlersFinished, condition } from '@temporalio/workflow';
import { CALL_REFUSALS, type CallRefusal } from '../contracts/refusals';
import { showCallDetails, showCallStatus } from './call-progress';
import type { CallAgent, CallChanges, CallTransferRecord } from '../contracts/calls';
import type { RecordEventInput as CallEventInput } from '../contracts/webhooks';
import {
  type AnswerRequest,
  type AnswerResult,
  type CallState,
  type CallWorkflowInput,
  type HangupRequest,
  type HangupResult,
  type ProviderStatusUpdate,
  type MediaNodeChoice,
  type TransferProgress,
} from '../contracts/calls';
import { releasesAfterEnd, HANGUP_ANSWER_WAIT_MS, hangupProviderCall, storeSteps, type ConversationRun, type EventLevel } from './call-steps';

export /** Who ended a call and why, as `call.ended` says it. */
interface Ending {
  by: string;
  reason: string;
  level: EventLevel;
}

export /**
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

export /** A connected call while it is live, and what its end is decided from. */
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
  /** After the final status, when the conversation has not ended: when it is canceled if it still has not (CLAIM_BEFORE_STOP_PATCH). */
  stopConversationAt: number | null;
  conversation: ConversationRun;
}

/**
 * A call's record as its workflow keeps it: the state the phases share, the messages that only
 * note what arrived, and the steps every phase takes (timeline entries, record changes, the slot,
 * hanging up, ending a call that never connected). The phases build on it: the queue and the dial
 * (./call-queue-phase.ts), the transfer (./call-transfer.ts), the live call (./call-lifecycle.ts).
 */
export abstract class CallRecord {
  readonly state: CallState;

  protected sequence = 0;

  protected granted = false;

  protected holdsSlot = false;

  /** Enqueued with the slot keeper and not released since (queued or granted). */
  protected inKeeperQueue = false;

  protected hangupRequest: HangupRequest | null = null;

  protected agentWasDeleted = false;

  protected readonly statuses: ProviderStatusUpdate[] = [];

  /** The answer waits here for the conversation's media node (no polling of the call record). */
  protected mediaNodeUrl: string | null = null;

  /** The media node the API's answer sent the call's audio to (docs/decisions/0165); null: the shared queue's node announces itself. */
  protected chosenNode: MediaNodeChoice | null = null;

  /** The agent's webhook URL as the call read it, passed with each event (undefined: the fan-out reads it). */
  protected agentWebhookUrl: string | null | undefined = undefined;

  /** The live call, while it is followed (a transfer request needs it). */
  protected live: LiveCall | null = null;

  protected transfer: TransferState | null = null;

  protected readonly transferReports: TransferProgress[] = [];

  constructor(protected readonly input: CallWorkflowInput) {
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

  protected nodeChosen(node: MediaNodeChoice): void {
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

  async hangup(request: HangupRequest): Promise<HangupResult> {
    this.hangupRequest ??= request;
    const ended = () => this.state.phase === 'ended';
    if (this.state.phase === 'queued' || this.state.phase === 'waiting-for-hours') await condition(ended);
    else await condition(ended, HANGUP_ANSWER_WAIT_MS);
    return { status: this.state.status };
  }

  // ---- the phases ----

  protected leftQueue(): boolean {
    return this.hangupRequest !== null || this.agentWasDeleted;
  }

  /** The next timeline entry's names (the step that writes it adds what it says). */
  protected nextEntry() {
    return {
      workspaceId: this.input.workspaceId,
      callId: this.input.callId,
      agentId: this.input.agentId,
      sequence: this.sequence++,
      ...(this.agentWebhookUrl !== undefined ? { agentWebhookUrl: this.agentWebhookUrl } : {}),
    };
  }

  protected event(type: string, message: string, level: EventLevel, latencyMs: number | null, data: Record<string, unknown> = {}): CallEventInput {
    return { ...this.nextEntry(), type, message, level, latencyMs, data, createdAt: new Date().toISOString() };
  }

  /** One step: the record's changes, then the event. */
  protected step(changes: CallChanges | undefined, entry?: CallEventInput): Promise<void> {
    return storeSteps().recordCallStep({ callId: this.input.callId, changes, event: entry });
  }

  /**
   * The step that makes the record final (`write`), with the slot given back right after it, so
   * that a `ringing` or `in-progress` record always holds a slot (docs/decisions/0164); histories
   * from before gave it back first. `holds`: the keeper has this call (queued, granted or active).
   */
  protected async endRecord<T>(holds: boolean, write: () => Promise<T>): Promise<T> {
    const releaseAfter = releasesAfterEnd();
    if (holds && !releaseAfter) await this.release();
    const written = await write();
    if (holds && releaseAfter) await this.release();
    return written;
  }

  protected async release(): Promise<void> {
    await storeSteps().releaseSlot({ workspaceId: this.input.workspaceId, callId: this.input.callId });
    this.holdsSlot = false;
    this.inKeeperQueue = false;
  }

  protected stopConversation(live: LiveCall): void {
    const { conversation } = live;
    if (!conversation.scope || conversation.done) return;
    conversation.canceled = true;
    conversation.scope.cancel();
  }

  protected async hangUp(live: LiveCall, by: Ending): Promise<void> {
    live.endedBy ??= by;
    if (live.hangupSent) return;
    live.hangupSent = true;
    showCallDetails(`hanging up: ${by.reason}`);
    if (live.viaProvider) await hangupProviderCall({ callId: this.input.callId });
    else this.stopConversation(live);
  }

  /** Ends a call that never connected: final status, `call.ended` with the reason as its message. Answers null. */
  protected async endUnconnected(
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
  protected endRefused(refusal: CallRefusal, status: 'canceled' | 'failed' = CALL_REFUSALS[refusal].callStatus): Promise<null> {
    return this.endUnconnected(status, CALL_REFUSALS[refusal].reason, CALL_REFUSALS[refusal].level, 'system', {}, refusal);
  }
}
