import { setHandler } from '@temporalio/workflow';
import { CallLifecycle } from './call-lifecycle';
import {
  agentDeletedSignal,
  answerUpdate,
  callStateQuery,
  hangupUpdate,
  mediaNodeSignal,
  providerStatusSignal,
  joinTransferUpdate,
  requestTransferUpdate,
  slotGrantedSignal,
  transferProgressSignal,
  type CallState,
  type CallWorkflowInput,
} from '../contracts/calls';

/**
 * One call from the queue to its end (`call-<call_id>`, task queue `calls`). An outbound call:
 * `call.queued`; waits for its agent's calling hours, then for a slot from the workspace's
 * slot keeper (oldest first); checks credits and the agent at the front; `call.dequeued`;
 * dials through the telephony provider (`call.placed`); follows the provider's status
 * callbacks (`providerStatus`) to `call.started` and the end; releases its slot. The
 * `hangup` update cancels a queued call or ends a live one. 24 hours in the queue cancel it.
 */
export async function callWorkflow(input: CallWorkflowInput): Promise<CallState> {
  // The workflow is wiring: its messages go to the call, and the call runs its phases
  // (workflows/call-lifecycle.ts has them, with their table).
  const call = new CallLifecycle(input);
  setHandler(callStateQuery, () => call.state);
  setHandler(slotGrantedSignal, () => call.slotGranted());
  setHandler(agentDeletedSignal, () => call.agentDeleted());
  setHandler(providerStatusSignal, (update) => call.providerStatus(update));
  setHandler(mediaNodeSignal, ({ url }) => call.mediaNodeReady(url));
  setHandler(answerUpdate, (request) => call.answer(request));
  setHandler(hangupUpdate, (request) => call.hangup(request));
  setHandler(requestTransferUpdate, (request) => call.requestTransfer(request));
  setHandler(joinTransferUpdate, (request) => call.joinTransfer(request));
  setHandler(transferProgressSignal, (report) => call.transferProgress(report));
  return call.run();
}
