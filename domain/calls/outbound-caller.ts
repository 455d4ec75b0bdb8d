import { findByIdOwned } from '../../db/by-id';
import { Agent } from '../../db/models/agent';
import { balanceOf } from '../billing/ledger';
import { numberOfWorkspace } from '../numbers/phone-numbers';
import { HttpError } from '../shared/http-error';

/**
 * The checks before outbound calls are placed (POST /calls, POST /batches): the agent is the
 * workspace's (else 422 at `body.agent_id`) and not paused (409), there is a caller number
 * (`from_number`, else the agent's; 400 without, and 400 when the workspace does not hold it),
 * and credits (402 at or below zero).
 */
export async function outboundCaller(
  workspaceId: string,
  agentId: string,
  fromNumber: string | undefined,
): Promise<{ agent: { _id: string; name: string }; fromNumber: string }> {
  const agent = await findByIdOwned<{ _id: string; name: string; status: string; phone_number: string | null }>(
    Agent,
    agentId,
    { workspace_id: workspaceId },
    { name: 1, status: 1, phone_number: 1 },
  );
  if (!agent) throw new HttpError(422, [{ type: 'value_error', loc: ['body', 'agent_id'], msg: 'no agent with this id in the workspace', input: agentId }]);
  if (agent.status === 'paused') throw new HttpError(409, `the agent "${agent.name}" is paused and takes no calls; set its status to active first`);
  const from = fromNumber ?? agent.phone_number;
  if (!from) throw new HttpError(400, 'no caller number: give from_number, or connect a phone number to the agent');
  // The provider dials only from numbers the workspace holds; refusing here beats a call that
  // waits in the queue and fails minutes later at the dial.
  if (!(await numberOfWorkspace(workspaceId, from))) throw new HttpError(400, notHeldDetail(from, fromNumber === undefined));
  if ((await balanceOf(workspaceId)) <= 0) throw new HttpError(402, 'out of credits: add credits in billing to place calls');
  return { agent: { _id: agent._id, name: agent.name }, fromNumber: from };
}

/** The 400's detail: whose number it is, and how to get one the workspace holds. */
function notHeldDetail(number: string, agentsNumber: boolean): string {
  const whose = agentsNumber ? `the agent's phone_number ${number}` : `from_number ${number}`;
  return (
    `no caller number: ${whose} is not a number of this workspace; ` +
    'claim it with POST /phone-numbers (GET /phone-numbers/available lists the numbers you can claim), or give a from_number the workspace holds'
  );
}
