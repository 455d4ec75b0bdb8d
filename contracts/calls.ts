import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SearchAttributePair } from '@temporalio/common';
import { workflowIds } from './ids';
import { AgentId, CallStatus, Kind, WorkspaceId } from './search-attributes';
import type { CallRefusal } from './refusals';
import type { CallChannel } from './slots';
import type { CallingHours } from './calling-hours';
import type { CallStatus as CallRecordStatus } from './call-statuses';

/**
 * Messages of the call workflow (`call-<call_id>`, task queue `calls`), shared by the API,
 * the slot keeper and the workflow. Importing this pulls in no workflow code.
 */

/** A call still queued after this long is canceled with `expired in queue` (contract, "Limits"). */
export const QUEUE_EXPIRY_MS = 24 * 60 * 60 * 1000;

export interface CallWorkflowInput {
  callId: string;
  workspaceId: string;
  agentId: string;
  direction: CallChannel;
  /** ISO time the call was placed (the queue's order and the 24 hours run from it); for inbound and browser calls, when it was answered. */
  queuedAt: string;
  /** Who placed it: a person's name or `key:<name>` (event `call.queued`, field `by`; a browser call's `started_by`). */
  placedBy: string;
  /** E.164 numbers: the callee and the caller ID. */
  toNumber: string;
  fromNumber: string;
  /** The `user_data` keys (event `call.started`, field `values`; never their values). */
  valueKeys: string[];
  /** Inbound: the provider's id of the call that was answered. */
  providerCallId?: string;
  /**
   * Inbound: the media node the API's answer sent the call's audio to (docs/decisions/0165);
   * its conversation runs there. Absent in histories from before, and for browser calls.
   */
  mediaNode?: MediaNodeChoice;
}

/**
 * A media node chosen by the API when it answered the provider (docs/decisions/0165): the
 * call's audio stream goes to `url`, and the call's conversation activity runs on the node's
 * own task queue, where only that node polls.
 */
export interface MediaNodeChoice {
  /** The node's public WebSocket base. */
  url: string;
  /** The node's own task queue (mediaNodeTaskQueue). */
  taskQueue: string;
}

/** What a dial asks the provider for, as the call's workflow gives it to the dial activities. */
export interface DialRequest {
  callId: string;
  from: string;
  to: string;
  timeLimitSeconds: number;
  /** Answering-machine detection: the call's agent screens for voicemail (docs/decisions/0158). */
  detectVoicemail: boolean;
  /** The call's agent, named in the answer URL (0244); absent in dials of workflows from before. */
  agentId?: string;
}

/** Who asked to hang up, for `hangup_by`. */
export interface HangupRequest {
  by: string;
}

export interface HangupResult {
  /** The call's status once the hang-up was applied. */
  status: string;
}

export type CallPhase = 'queued' | 'waiting-for-hours' | 'waiting-to-dial' | 'dialling' | 'live' | 'ended';

export interface CallState {
  callId: string;
  phase: CallPhase;
  status: string;
  /** ISO: when the slot was granted, null while queued. */
  grantedAt: string | null;
  hangupReason: string | null;
  /** Once connected: why the length limit would end the call (`max duration reached` or `credits ran out`). */
  capReason: string | null;
  /** Why the call was not dialled, as a type (a batch pauses or cancels on it); absent from results recorded before it was added. */
  refusal?: CallRefusal | null;
  /**
   * The call ended on an answering machine (`hangup_reason` `voicemail`): what the agent did, which
   * a batch retries on (`hang_up`) or settles (`leave_message`) (docs/decisions/0159). Absent otherwise.
   */
  voicemailAction?: 'hang_up' | 'leave_message';
}

/**
 * The call statuses the call workflow takes from the provider's callbacks: the contract's
 * words. Plivo's own `CallStatus` words (`cancel`, `timeout`, ...) are mapped to these where a
 * callback is parsed (providers/telephony/callbacks.ts, docs/decisions/0176), so that recorded
 * histories replay unchanged.
 */
export const PROVIDER_CALL_STATUSES = ['ringing', 'in-progress', 'completed', 'no-answer', 'busy', 'failed', 'canceled'] as const;
export type ProviderCallStatus = (typeof PROVIDER_CALL_STATUSES)[number];

/** One status callback of the telephony provider, as the callback route relays it. */
export interface ProviderStatusUpdate {
  status: ProviderCallStatus;
  /** The provider's id of the call. */
  providerCallId: string;
  /** ISO, when the callback arrived. */
  at: string;
  /** Seconds the provider counted as answered (its `Duration`), on `completed`. */
  durationSeconds?: number;
  /** The provider's hang-up cause (e.g. `NORMAL_CLEARING`), when it gives one. */
  cause?: string;
  /** On the answer (`in-progress`): the media node the answer sent the audio to (docs/decisions/0165). */
  mediaNode?: MediaNodeChoice;
}

/** The slot keeper hands this call a concurrency slot (see contracts/slots.ts). */
export const slotGrantedSignal = defineSignal('slotGranted');
export const providerStatusSignal = defineSignal<[ProviderStatusUpdate]>('providerStatus');
/** The call's agent was deleted: a call still queued is canceled with `agent deleted`; a live one goes on. */
export const agentDeletedSignal = defineSignal('agentDeleted');
/** `POST /calls/{id}/hangup`: a queued call is canceled, a live one ends now. */
export const hangupUpdate = defineUpdate<HangupResult, [HangupRequest]>('hangup');
export const callStateQuery = defineQuery<CallState>('state');

/**
 * The call was answered: the provider's answer callback (outbound), or the admission of an
 * inbound or browser call. The answer names the media node running the call's conversation,
 * where the call's audio must go.
 */
export interface AnswerRequest {
  /** The answer callback's own status (outbound): taken as a `providerStatus` signal is. */
  status?: ProviderStatusUpdate;
  /** How long to wait for the conversation's media node. */
  waitMs: number;
}

export interface AnswerResult {
  /** The media node's public WebSocket base; null when none took the call within `waitMs`, or the call ended. */
  mediaNodeUrl: string | null;
  /** The call ended before its audio could go anywhere. */
  ended: boolean;
}

export const answerUpdate = defineUpdate<AnswerResult, [AnswerRequest]>('answer');

/** From the conversation activity once its media node waits for the call's audio: the node's public WebSocket base. */
export interface MediaNodeReady {
  url: string;
}
export const mediaNodeSignal = defineSignal<[MediaNodeReady]>('mediaNode');

/**
 * Transfer to a person (docs/decisions/0160-0161): the conversation's `transfer_call` tool asks
 * the call's workflow, which drives the provider and answers once the transfer is under way
 * (cold: the call was handed to the destination's `<Dial>`) or has failed. Events while the
 * conversation runs are the conversation's (`call.transfer_started`, a failure it is told of);
 * the workflow writes those after it (`call.transferred`, a cold dial's failure).
 */
export interface TransferRequest {
  /** E.164, one of the agent's `call.transfer.destinations`. */
  destination: string;
  description: string;
  mode: 'cold' | 'warm';
  /** The model's reason, as `call.transfer_started` says it. */
  reason: string;
  ringTimeoutSeconds: number;
}

export interface TransferResult {
  /**
   * `handed-over`: the call is with the destination now, or dials it (cold); the conversation
   * ends. `answered` (warm): a person answered the second leg, whose audio streams to the same
   * media node as `<call_id>:transfer`; the agent briefs them, then `joinTransfer`. `failed`: the agent stays.
   */
  outcome: 'handed-over' | 'answered' | 'failed';
  /** Why it failed (`call.transfer_failed` reasons), null when handed over. */
  reason: string | null;
}

export const requestTransferUpdate = defineUpdate<TransferResult, [TransferRequest]>('requestTransfer');

/** Warm, after `answered`: `join` both legs in one conference (the agent leaves), or not (the second leg is hung up, the transfer failed with `reason`). */
export interface JoinTransferRequest {
  join: boolean;
  reason?: string;
}
export const joinTransferUpdate = defineUpdate<TransferResult, [JoinTransferRequest]>('joinTransfer');

/** The stream key of a warm transfer's second leg on the media node (its token's subject too). */
export function transferLegStreamKey(callId: string): string {
  return `${callId}:transfer`;
}

/** The provider's dial of a transfer destination, as its `<Dial>` callbacks report it (docs/decisions/0160). */
export interface TransferProgress {
  /**
   * `answered`: the destination picked up (bridged); `ended`: the dial is over (action URL), or the
   * bridged leg hung up; `human` / `machine`: a warm transfer's leg as answering-machine detection judged it.
   */
  event: 'answered' | 'ended' | 'human' | 'machine';
  /** Plivo's `DialStatus` on `ended` (completed, busy, failed, timeout, no-answer), or the B leg's status. */
  status: string;
  /** The destination leg's seconds (`DialBLegDuration`), when given. */
  bridgedSeconds?: number;
  /** ISO, when the callback arrived. */
  at: string;
}

export const transferProgressSignal = defineSignal<[TransferProgress]>('transferProgress');

export const callWorkflowId = workflowIds.call;

/**
 * How a call workflow starts, so that ops find and read it in the Temporal UI: searchable by
 * workspace, agent and status (queued for a placed outbound call, in-progress for an admitted
 * inbound or browser call; the workflow keeps `CallStatus` current from then on), with a
 * one-line summary and the ids behind it. The API and the batch workflow (which starts its
 * calls as children) both start calls with these.
 */
export function callStartOptions(
  input: CallWorkflowInput,
  agentName: string,
  status: 'queued' | 'in-progress',
): { typedSearchAttributes: SearchAttributePair[]; staticSummary: string; staticDetails: string } {
  return {
    typedSearchAttributes: [
      { key: WorkspaceId, value: input.workspaceId },
      { key: AgentId, value: input.agentId },
      { key: CallStatus, value: status },
      { key: Kind, value: 'call' },
    ],
    staticSummary: callSummary(input, agentName),
    staticDetails: [
      `Call \`${input.callId}\` of workspace \`${input.workspaceId}\`, agent \`${input.agentId}\` (${agentName}).`,
      input.direction === 'outbound' ? `Placed by ${input.placedBy} at ${input.queuedAt}.` : `Answered at ${input.queuedAt}.`,
      `Its record and timeline: \`GET /api/v1/calls/${input.callId}\` and \`/events\`.`,
    ].join('\n'),
  };
}

/** `outbound call to +919812345678 from +918047180001 with Support`, and the like for inbound and browser calls. */
export function callSummary(input: Pick<CallWorkflowInput, 'direction' | 'toNumber' | 'fromNumber' | 'placedBy'>, agentName: string): string {
  if (input.direction === 'outbound') return `outbound call to ${input.toNumber} from ${input.fromNumber} with ${agentName}`;
  if (input.direction === 'inbound') return `inbound call from ${input.fromNumber} to ${input.toNumber} with ${agentName}`;
  return `browser call with ${agentName}, started by ${input.placedBy}`;
}

/** The call workflow's signature, for typed clients that import no workflow code (workflows/call.ts implements it). */
export type CallWorkflow = (input: CallWorkflowInput) => Promise<CallState>;

/** What the call workflow needs of its agent, read again at each step (settings may change while a call waits). */
export interface CallAgent {
  name: string;
  status: 'active' | 'paused';
  hours: CallingHours;
  maxDurationSeconds: number;
  /** Model descriptors for `call.started` (`provider/model`). */
  stt: string;
  llm: string;
  tts: string;
  /**
   * The agent's `webhook_url`, where the call's events also go (decision 0155). Absent from
   * the agents of histories recorded before it was read here: their events read it again.
   */
  webhookUrl?: string | null;
  /**
   * Whether the agent screens for voicemail (`call.voicemail.detect`), handed to the dial
   * (docs/decisions/0162). Absent from the agents of histories recorded before it was read here.
   */
  detectsVoicemail?: boolean;
  /**
   * The workspace keeps India's calling hours for +91 numbers (`compliance.india_calling_hours`,
   * docs/decisions/0207). Absent from the agents of histories recorded before it was read: off.
   */
  indiaCallingHours?: boolean;
}

/** The call's fields the workflow writes; dates as ISO strings (activity arguments are JSON). */
export interface CallChanges {
  status?: CallRecordStatus;
  dequeued_at?: string;
  started_at?: string;
  ended_at?: string;
  duration_seconds?: number;
  provider_call_id?: string;
  provider_status?: string;
  hangup_by?: string;
  hangup_reason?: string;
  /** Transfer to a person (docs/decisions/0160): the record's `transfer`, whole. */
  transfer?: CallTransferRecord;
}

/** The call record's `transfer`: who took the call (docs/decisions/0160). Times are ISO here, dates once stored. */
export interface CallTransferRecord {
  destination: string;
  description: string;
  mode: 'cold' | 'warm';
  status: 'started' | 'transferred' | 'failed';
  reason: string | null;
  transferred_at: string | null;
  bridged_seconds: number;
}
