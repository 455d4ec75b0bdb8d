import { WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { SignalDefinition, UpdateDefinition } from '@temporalio/common';
import {
  agentDeletedSignal,
  answerUpdate,
  callStartOptions,
  callWorkflowId,
  hangupUpdate,
  mediaNodeSignal,
  providerStatusSignal,
  requestTransferUpdate,
  joinTransferUpdate,
  transferProgressSignal,
  type JoinTransferRequest,
  type TransferProgress,
  type TransferRequest,
  type TransferResult,
  type AnswerRequest,
  type CallWorkflow,
  type CallWorkflowInput,
  type ProviderStatusUpdate,
} from '../../contracts/calls';
import {
  enqueueSignal,
  releaseSignal,
  setLimitSignal,
  slotKeeperId,
  slotKeeperStartOptions,
  tryAcquireUpdate,
  type AcquireSlot,
  type EnqueueCall,
  type ReleaseCall,
  type SlotKeeperWorkflow,
} from '../../contracts/slots';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { ignoreWorkflowNotFound } from '../shared/temporal';

/**
 * The only code that starts, signals, queries or updates the calls area's workflows: each
 * call's `call-<call_id>` and each workspace's slot keeper. Callers (routes, MCP tools,
 * activities, the media node) name what they want done; the message names, ids and start
 * options stay here and in contracts/.
 */

/**
 * Starts a call's workflow (`call-<call_id>` on `calls`), searchable by workspace, agent and
 * status (queued for a placed outbound call, in-progress for an admitted inbound or browser
 * call) and summarized for the Temporal UI with its numbers and agent.
 */
export async function startCallWorkflow(temporal: Client, input: CallWorkflowInput, agentName: string, status: 'queued' | 'in-progress'): Promise<void> {
  await temporal.workflow.start<CallWorkflow>('callWorkflow', {
    taskQueue: TASK_QUEUES.calls,
    workflowId: callWorkflowId(input.callId),
    args: [input],
    ...callStartOptions(input, agentName, status),
  });
}

/**
 * Ends a queued or live call through its workflow's `hangup` update, as `by`. False when the
 * workflow had already ended (or refused the update because the call is over).
 */
export async function hangUpCallWorkflow(temporal: Client, callId: string, by: string): Promise<boolean> {
  const done = await updateRunningCall(temporal, callId, hangupUpdate, { by });
  return done !== CALL_OVER;
}

/**
 * Gives the call's workflow its answer (`answer` update) and returns the media node running
 * the call's conversation: its public WebSocket base, `null` when none took the call in time,
 * or `call-over` when the call has ended (or its workflow is not running).
 */
export async function answerCall(temporal: Client, callId: string, request: AnswerRequest): Promise<string | null | 'call-over'> {
  const answer = await updateRunningCall(temporal, callId, answerUpdate, request);
  return answer === CALL_OVER || answer.ended ? 'call-over' : answer.mediaNodeUrl;
}

/** Hands a provider's status callback to the call's workflow; false when that workflow is not running. */
export function signalProviderStatus(temporal: Client, callId: string, update: ProviderStatusUpdate): Promise<boolean> {
  return signalRunningCall(temporal, callId, providerStatusSignal, update);
}

/** A transfer's dial report (docs/decisions/0160) for the call's workflow; false when that workflow is not running. */
export function signalTransferProgress(temporal: Client, callId: string, report: TransferProgress): Promise<boolean> {
  return signalRunningCall(temporal, callId, transferProgressSignal, report);
}

const CALL_OVER = Symbol('the call is over');
const TRANSFER_OF_AN_ENDED_CALL: TransferResult = { outcome: 'failed', reason: 'error' };

/**
 * Runs an update of the call's workflow; CALL_OVER when that workflow is not running, or refused
 * the update because the call is over.
 */
async function updateRunningCall<Ret, Arg>(temporal: Client, callId: string, update: UpdateDefinition<Ret, [Arg]>, arg: Arg): Promise<Ret | typeof CALL_OVER> {
  try {
    return await temporal.workflow.getHandle(callWorkflowId(callId)).executeUpdate(update, { args: [arg] });
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || error instanceof WorkflowUpdateFailedError) return CALL_OVER;
    throw error;
  }
}

/** Signals the call's workflow; false when that workflow is not running (a late callback of an ended call). */
async function signalRunningCall<T>(temporal: Client, callId: string, signal: SignalDefinition<[T]>, arg: T): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(callWorkflowId(callId)).signal(signal, arg);
    return true;
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    return false;
  }
}

/** The conversation's `transfer_call`: the call's workflow transfers the call and answers how it went (an ended call: failed). */
export async function requestTransfer(temporal: Client, callId: string, request: TransferRequest): Promise<TransferResult> {
  const result = await updateRunningCall(temporal, callId, requestTransferUpdate, request);
  return result === CALL_OVER ? TRANSFER_OF_AN_ENDED_CALL : result;
}

/** Warm: the conversation briefed the person; the call's workflow joins both legs (or gives up). An ended call: failed. */
export async function joinTransfer(temporal: Client, callId: string, request: JoinTransferRequest): Promise<TransferResult> {
  const result = await updateRunningCall(temporal, callId, joinTransferUpdate, request);
  return result === CALL_OVER ? TRANSFER_OF_AN_ENDED_CALL : result;
}

/** Tells a queued call that its agent was deleted; a call whose workflow has ended needs nothing. */
export async function signalAgentDeleted(temporal: Client, callId: string): Promise<void> {
  await temporal.workflow.getHandle(callWorkflowId(callId)).signal(agentDeletedSignal).catch(ignoreWorkflowNotFound);
}

/** The media node that took the call's conversation tells the workflow where its audio goes. */
export async function announceMediaNode(temporal: Client, callId: string, url: string): Promise<void> {
  await temporal.workflow.getHandle(callWorkflowId(callId)).signal(mediaNodeSignal, { url });
}

/** Of these calls, those whose workflows are no longer running (or never existed). */
export async function callWorkflowsEnded(temporal: Client, callIds: string[]): Promise<string[]> {
  const ended = await Promise.all(
    callIds.map(async (callId) => {
      try {
        const { status } = await temporal.workflow.getHandle(callWorkflowId(callId)).describe();
        return status.name === 'RUNNING' ? null : callId;
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return callId;
        throw error;
      }
    }),
  );
  return ended.filter((id): id is string => id !== null);
}

/** The slot keeper's workflow, started on a workspace's first call (on `calls`) and kept running. */
function slotKeeperStart(workspaceId: string) {
  return {
    workflowId: slotKeeperId(workspaceId),
    taskQueue: TASK_QUEUES.calls,
    args: [{ workspaceId }] as Parameters<SlotKeeperWorkflow>,
    ...slotKeeperStartOptions(workspaceId),
  };
}

/** Signal-with-start: the keeper starts on a workspace's first call and keeps running. */
export async function signalKeeper(
  temporal: Client,
  workspaceId: string,
  send: { signal: typeof enqueueSignal; args: [EnqueueCall] } | { signal: typeof releaseSignal; args: [ReleaseCall] },
): Promise<void> {
  await temporal.workflow.signalWithStart<SlotKeeperWorkflow, [EnqueueCall] | [ReleaseCall]>('slotKeeperWorkflow', {
    ...slotKeeperStart(workspaceId),
    signal: send.signal,
    signalArgs: send.args,
  });
}

/** A live (inbound or browser) call asks its workspace's keeper for a slot now, starting the keeper if needed. */
export async function tryAcquireSlot(temporal: Client, workspaceId: string, request: AcquireSlot): Promise<boolean> {
  const slot = await temporal.workflow.executeUpdateWithStart(tryAcquireUpdate, {
    args: [request],
    startWorkflowOperation: new WithStartWorkflowOperation<SlotKeeperWorkflow>('slotKeeperWorkflow', {
      ...slotKeeperStart(workspaceId),
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  return slot.granted;
}

/** Gives a slot back to a running keeper (one that holds it is running). */
export async function releaseSlot(temporal: Client, workspaceId: string, callId: string): Promise<void> {
  await temporal.workflow.getHandle(slotKeeperId(workspaceId)).signal(releaseSignal, { callId });
}

/** Tells the workspace's keeper its new limit; `not_running` when there is none (it reads the limit when it starts). */
export async function setKeeperLimit(temporal: Client, workspaceId: string, limit: number): Promise<'signalled' | 'not_running'> {
  try {
    await temporal.workflow.getHandle(slotKeeperId(workspaceId)).signal(setLimitSignal, { limit });
    return 'signalled';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'not_running';
    throw error;
  }
}
