import { condition, defineQuery, defineSignal, getExternalWorkflowHandle, setHandler } from '@temporalio/workflow';
import { slotGrantedSignal } from '../../contracts/calls';
import { releaseSignal, slotKeeperId } from '../../contracts/slots';

/**
 * A stand-in for a call workflow, for tests and ops diagnostics: started as `call-<call_id>`,
 * it records every `slotGranted` the slot keeper sends it and, on `done`, gives the slot (or
 * its place in the queue) back with `release`. With it, the keeper's grants can be watched
 * without dialling anything.
 */
export interface SlotProbeInput {
  workspaceId: string;
  callId: string;
}

export interface SlotProbeState {
  callId: string;
  /** Workflow time (ISO) of each grant received; more than one would be a keeper bug. */
  grantedAt: string[];
  released: boolean;
}

export const slotProbeDoneSignal = defineSignal('done');
export const slotProbeStateQuery = defineQuery<SlotProbeState>('state');

export async function slotProbeWorkflow(input: SlotProbeInput): Promise<SlotProbeState> {
  const state: SlotProbeState = { callId: input.callId, grantedAt: [], released: false };
  let done = false;
  setHandler(slotProbeStateQuery, () => state);
  setHandler(slotGrantedSignal, () => {
    state.grantedAt.push(new Date().toISOString());
  });
  setHandler(slotProbeDoneSignal, () => {
    done = true;
  });
  await condition(() => done);
  await getExternalWorkflowHandle(slotKeeperId(input.workspaceId)).signal(releaseSignal, { callId: input.callId });
  state.released = true;
  return state;
}
