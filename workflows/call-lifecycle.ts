import { allHandlersFinished, condition, executeChild, log, patched, workflowInfo } from '@temporalio/workflow';
import { CONVERSATION_CANCELED_REASON, CONVERSATION_SEQUENCE_END, CONVERSATION_SEQUENCE_START } from '../contracts/conversation';
import { TASK_QUEUES } from '../contracts/task-queues';
import { analyticsWorkflowId } from '../contracts/analytics';
import { analyticsWorkflow } from './analytics';
import { callLength, clockTime, showCallDetails, showCallStatus } from './call-progress';
import { AgentId, Kind, WorkspaceId } from '../contracts/search-attributes';
import type { CallAgent } from '../contracts/calls';
import { type CallState, type ProviderStatusUpdate } from '../contracts/calls';
import {
  BROWSER_STREAM_WAIT_SECONDS,
  CAP_GRACE_MS,
  CLAIM_BEFORE_STOP_PATCH,
  CONVERSATION_CLAIM_GRACE_MS,
  CONVERSATION_STOP_WAIT_MS,
  releasesAfterEnd,
  FINAL_PROVIDER_STATUSES,
  PHONE_STREAM_WAIT_SECONDS,
  startConversation,
  conversationNode,
  storeSteps,
  hangupTransferLeg,
  type EventLevel,
} from './call-steps';
import { CallTransferPhase } from './call-transfer';
import type { Ending, LiveCall } from './call-record';
import { bridgedSecondsOf, liveTimeOf } from './call-charge';

/** How long, after the provider's final status of a transferred call, the dial's own end report is waited for (its bridged seconds). */
const DIAL_REPORT_WAIT_MS = 3_000;

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
export class CallLifecycle extends CallTransferPhase {
  async run(): Promise<CallState> {
    const agent = this.input.direction === 'outbound' ? await this.queueAndDial() : await this.admitLive();
    if (!agent) return this.state;
    const live = await this.followLiveCall(agent);
    if (!live) return this.state;
    const story = await this.close(live);
    await this.runAnalytics(story);
    return this.state;
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
      stopConversationAt: null,
      conversation: {
        scope: null,
        done: false,
        canceled: false,
        outcome: null,
        failure: null,
        timedOut: false,
        lastBeatAt: null,
        liveSince: null,
        startedAgainAt: null,
      },
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
      const deadline = live.stopConversationAt ?? live.finalWaitUntil ?? live.capAt;
      const left = deadline - Date.now();
      if (left <= 0 && live.stopConversationAt !== null) {
        // A conversation started again (its first task never ran, 0241) has the same time to claim its stream from then.
        const secondGraceEnds = (conversation.startedAgainAt ?? 0) + CONVERSATION_CLAIM_GRACE_MS;
        if (secondGraceEnds > Date.now()) {
          live.stopConversationAt = secondGraceEnds;
          continue;
        }
        // The conversation had its time to end on its own after the call ended: stop it now.
        live.stopConversationAt = null;
        this.stopConversationAfterTheCall(live);
        continue;
      }
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
      // still waiting for its stream; it saves what it has and returns. Since the patch, first
      // give it time to end on its own: its stream is closed, and a conversation that ended
      // before its activity claimed it is saved only once the activity runs (0232). One we
      // canceled already (the cap) is not waited for twice.
      if (conversation.scope !== null && !conversation.done && !conversation.canceled && patched(CLAIM_BEFORE_STOP_PATCH))
        live.stopConversationAt = Date.now() + CONVERSATION_CLAIM_GRACE_MS;
      else this.stopConversationAfterTheCall(live);
      // The slot is given back when the record is closed (close); histories from before gave it back here.
      if (this.holdsSlot && !releasesAfterEnd()) await this.release();
    }
    return live;
  }

  /** The call is over at the provider: cancel the conversation, and give it CONVERSATION_STOP_WAIT_MS to stop before the call ends without it. */
  private stopConversationAfterTheCall(live: LiveCall): void {
    this.stopConversation(live);
    live.finalWaitUntil = Date.now() + CONVERSATION_STOP_WAIT_MS;
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
    const { endedAtMs, durationSeconds } = liveTimeOf({
      startedAt,
      liveFrom,
      endCandidates: [outcome ? Date.parse(outcome.endedAt) : null, conversation.lastBeatAt, finalStatus ? Date.parse(finalStatus.at) : null],
      now: Date.now(),
    });
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
      bridgedSeconds = bridgedSecondsOf({
        reportedSeconds: transfer.reportedBridgedSeconds,
        transferredAt: transfer.record.transferred_at!,
        finalStatusAt: finalStatus?.at ?? null,
      });
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
}
