import { condition } from '@temporalio/workflow';
import { showCallDetails } from './call-progress';
import type { CallTransferRecord } from '../contracts/calls';
import { type JoinTransferRequest, type TransferProgress, type TransferRequest, type TransferResult } from '../contracts/calls';
import {
  CAP_GRACE_MS,
  FINAL_PROVIDER_STATUSES,
  PROVIDER_LIMIT_MARGIN_SECONDS,
  dialTransferLeg,
  hangupTransferLeg,
  joinTransferLegs,
  transferProviderCall,
} from './call-steps';
import { CallQueuePhase } from './call-queue-phase';

/** Warm: after the leg answered, how long the provider's machine-detection verdict is waited for; none by then is taken for a person. */
const LEG_VERDICT_WAIT_MS = 4_000;

/** Warm: past the ring timeout, how long the second leg may take to report its end (or answer) before the transfer fails. */
const LEG_REPORT_GRACE_MS = 10_000;

/** `DialStatus` of a dial that did not connect, as `call.transfer_failed` names it. */
export function transferFailureOf(dialStatus: string): string {
  if (dialStatus === 'no-answer' || dialStatus === 'timeout') return 'no-answer';
  if (dialStatus === 'busy') return 'busy';
  if (dialStatus === 'cancel' || dialStatus === 'canceled') return 'canceled';
  return 'failed';
}

/** A live call's transfer to a person (docs/decisions/0160-0161): the request, the warm leg, the join, its progress and failure. */
export abstract class CallTransferPhase extends CallQueuePhase {
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
  protected async dialWarmLeg(request: TransferRequest): Promise<TransferResult> {
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
  protected async failWarm(reason: string): Promise<TransferResult> {
    const transfer = this.transfer!;
    transfer.record.status = 'failed';
    transfer.record.reason = reason;
    await this.step({ transfer: transfer.record });
    return { outcome: 'failed', reason };
  }

  /**
   * A report of the transfer's dial: the destination answered (`call.transferred`: the record
   * says who took the call), or the dial ended (its bridged seconds; or, never answered,
   * `call.transfer_failed`, and the provider hangs up the call).
   */
  protected async followTransfer(report: TransferProgress): Promise<void> {
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
}
