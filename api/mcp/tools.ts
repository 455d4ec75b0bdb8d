import type { Client } from '@temporalio/client';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { createAgentAs, updateAgentAs } from '../../domain/agents/changes';
import type { AgentInput } from '../../domain/agents/settings';
import type { VoiceList } from '../../domain/agents/voice';
import { findAgent, listAgents } from '../../domain/agents/store';
import { agentView } from '../../domain/agents/views';
import type { Caller } from '../auth/context';
import { balanceSummaryFor } from '../../domain/billing/balance';
import { callTimelineOf, findCallOf, hangUpCallAs, listCallsOf, placeCallAs, type CallQuery, type NewCallBody } from '../../domain/calls/call-actions';
import { callLimitsSummaryOf } from '../../domain/calls/limits-view';
import { callView } from '../../domain/calls/views';
import { addToDoNotCallAs, doNotCallPage, type NewDoNotCallBody } from '../../domain/calls/do-not-call';
import { listDeliveriesOf, retryDeliveryOf, type DeliveryQuery } from '../../domain/webhooks/delivery-actions';

export interface ToolDeps {
  temporal: Client;
  now: () => Date;
  /** The speech-synthesis service's voices, which an agent's `voice.voice_id` is checked against. */
  synthesizer: VoiceList;
}

type Args = Record<string, unknown>;

/**
 * One MCP tool: the HTTP operations it mirrors (their `x-access` rules are checked before it
 * runs, and the first one's parameters and body are its input schema), and what it does, by
 * calling the same functions as those operations' routes.
 */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  /** operationIds in schemas/openapi.yaml; the first gives the input schema. */
  mirrors: [string, ...string[]];
  annotations: ToolAnnotations;
  run(args: Args, caller: Caller, deps: ToolDeps): Promise<unknown>;
}

const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };

const workspaceOf = (caller: Caller) => caller.access.workspace.id;

/** Splits off a path parameter; the rest is the body, as the HTTP request would carry it. */
function withoutKey<K extends string>(args: Args, key: K): [string, Args] {
  const { [key]: value, ...rest } = args;
  return [String(value), rest];
}

export const MCP_TOOLS: readonly McpTool[] = [
  {
    name: 'list_agents',
    title: 'List agents',
    description: 'Every voice agent of the workspace, newest first, with its settings (as GET /agents).',
    mirrors: ['listAgents'],
    annotations: READ,
    run: async (_args, caller) => (await listAgents(workspaceOf(caller))).map(agentView),
  },
  {
    name: 'get_agent',
    title: 'Get an agent',
    description: 'One agent with its settings and current version (as GET /agents/{agent_id}).',
    mirrors: ['getAgent'],
    annotations: READ,
    run: async (args, caller) => agentView(await findAgent(workspaceOf(caller), String(args.agent_id))),
  },
  {
    name: 'create_agent',
    title: 'Create an agent',
    description:
      'Creates a voice agent (as POST /agents). Only `name` is required; every other setting takes its default. ' +
      '`call.voicemail` screens outbound calls for answering machines (`detect`; `action` hang_up, or leave_message with a `message` said after the beep). ' +
      '`call.keypad` (both off by default): `press_digits` offers the model the built-in tool press_digits (DTMF keys 0-9 * #, w and W pauses) to get through phone menus; `caller_digits` puts the keys a caller presses into their turn. ' +
      '`call.transfer` lets the agent hand a caller to a person: `destinations` (at most 10 E.164 `number`s, each with a `description` of when to use it, `mode` cold (default) or warm: warm briefs the person with a summary first) offer the model the built-in tool transfer_call; `handover_message` is said first; `ring_timeout_seconds` 10 to 120. ' +
      'Setting `phone_number` needs the permission numbers.manage, which connected apps do not have.',
    mirrors: ['createAgent'],
    annotations: WRITE,
    run: async (args, caller, deps) => agentView(await createAgentAs(caller, args as unknown as AgentInput, deps.now(), deps.synthesizer)),
  },
  {
    name: 'update_agent',
    title: 'Update an agent',
    description:
      "Replaces an agent's settings and saves a new version (as PUT /agents/{agent_id}): send the whole agent; " +
      'a setting left out takes its default, except `phone_number`, which keeps the current number when left out.',
    mirrors: ['updateAgent'],
    annotations: { ...WRITE, idempotentHint: false },
    run: async (args, caller, deps) => {
      const [agentId, agent] = withoutKey(args, 'agent_id');
      return agentView(await updateAgentAs(caller, agentId, agent as unknown as AgentInput, deps.now(), deps.synthesizer));
    },
  },
  {
    name: 'place_call',
    title: 'Place a call',
    description:
      "Places an outbound call with an agent (as POST /calls): it joins the workspace's queue and is dialled when a slot is free " +
      "and the agent's calling hours are open. `from_number` defaults to the agent's number. Costs credits.",
    mirrors: ['placeCall'],
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    run: (args, caller, deps) => placeCallAs(deps.temporal, caller, args as unknown as NewCallBody, deps.now()),
  },
  {
    name: 'hang_up_call',
    title: 'Hang up a call',
    description: 'Cancels a queued call, or ends a live one now (as POST /calls/{call_id}/hangup). A call that has ended already is an error (409).',
    mirrors: ['hangupCall'],
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    run: (args, caller, deps) => hangUpCallAs(deps.temporal, caller, String(args.call_id)),
  },
  {
    name: 'get_call',
    title: 'Get a call with its transcript and timeline',
    description: 'One call record with its transcript (as GET /calls/{call_id}), and its timeline of events, oldest first (as GET /calls/{call_id}/events).',
    mirrors: ['getCall', 'listCallEvents'],
    annotations: READ,
    run: async (args, caller) => {
      const call = await findCallOf(workspaceOf(caller), String(args.call_id));
      return { call: callView(call), timeline: await callTimelineOf(call) };
    },
  },
  {
    name: 'list_calls',
    title: 'List calls',
    description: "One page of the workspace's calls, newest first, with filters (as GET /calls); `total` counts every match.",
    mirrors: ['listCalls'],
    annotations: READ,
    run: (args, caller) => listCallsOf(workspaceOf(caller), args as CallQuery),
  },
  {
    name: 'list_do_not_call',
    title: 'List the do-not-call list',
    description:
      "One page of the workspace's do-not-call list, newest first (as GET /do-not-call); `total` counts every number. Calls to these numbers are refused.",
    mirrors: ['listDoNotCall'],
    annotations: READ,
    run: (args, caller) => doNotCallPage(workspaceOf(caller), args as { limit?: number; skip?: number }),
  },
  {
    name: 'add_to_do_not_call',
    title: 'Add a number to the do-not-call list',
    description:
      'Puts an E.164 number on the do-not-call list (as POST /do-not-call): no outbound call is placed or dialled to it. ' +
      'A number already listed is answered as it is. `source` defaults to `api`.',
    mirrors: ['addDoNotCall'],
    annotations: { ...WRITE, idempotentHint: true },
    run: async (args, caller, deps) => (await addToDoNotCallAs(caller, args as unknown as NewDoNotCallBody, deps.now())).entry,
  },
  {
    name: 'get_balance',
    title: 'Read the balance',
    description: "The credit balance, the minutes it buys at the plan's price and whether it is low (as GET /billing).",
    mirrors: ['getBalance'],
    annotations: READ,
    run: (_args, caller) => balanceSummaryFor(workspaceOf(caller)),
  },
  {
    name: 'get_limits',
    title: 'Read the call limits',
    description: 'The concurrency limit, live and queued calls, and the open limit request (as GET /workspace/limits).',
    mirrors: ['getCallLimits'],
    annotations: READ,
    run: (_args, caller) => callLimitsSummaryOf(workspaceOf(caller)),
  },
  {
    name: 'list_webhook_deliveries',
    title: 'List webhook deliveries',
    description: 'One page of webhook deliveries, newest first, with filters (as GET /webhooks/deliveries); `total` counts every match.',
    mirrors: ['listWebhookDeliveries'],
    annotations: READ,
    run: (args, caller) => listDeliveriesOf(workspaceOf(caller), args as DeliveryQuery),
  },
  {
    name: 'retry_webhook_delivery',
    title: 'Retry a webhook delivery',
    description: 'Makes one extra attempt of a delivery now and answers the delivery after it (as POST /webhooks/deliveries/{delivery_id}/retry).',
    mirrors: ['retryWebhookDelivery'],
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    run: (args, caller, deps) => retryDeliveryOf(deps.temporal, workspaceOf(caller), String(args.delivery_id)),
  },
];
