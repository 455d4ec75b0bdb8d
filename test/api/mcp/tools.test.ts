import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { activeOwner, holdNumbers, memberWithRole, oauthTokenFor, type SignedUp, withJson } from '../../support/accounts';
import { randomNumbers } from '../../support/providers';
import { startApi, type RunningApi } from '../../support/api';
import { until } from '../../support/until';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';
import { agentsClient } from '../agents/helpers';
import { connectMcp, type McpSession } from './mcp-client';

/** The owner's caller number. */
const [FROM] = randomNumbers(1);

/** Calling hours that are closed now (UTC), so that placed calls stay queued for the test. */
function closedHours() {
  const hour = new Date().getUTCHours();
  return hour < 12 ? { call_start_hour: 20, call_end_hour: 21, timezone: 'UTC' } : { call_start_hour: 2, call_end_hour: 3, timezone: 'UTC' };
}

const TOOL_NAMES = [
  'add_to_do_not_call',
  'create_agent',
  'get_agent',
  'get_balance',
  'get_call',
  'get_limits',
  'hang_up_call',
  'list_agents',
  'list_calls',
  'list_do_not_call',
  'list_webhook_deliveries',
  'place_call',
  'retry_webhook_delivery',
  'update_agent',
];

/**
 * The MCP server at /mcp, driven by the SDK's own client with access tokens of connected apps,
 * over the real API, Temporal workers (calls, webhooks) and a real webhook receiver. Each tool
 * is compared with the HTTP endpoint it mirrors, called with the same token.
 */
describe('MCP server: tools', function () {
  this.timeout(120_000);
  let api: RunningApi;
  let receiver: WebhookReceiver;
  let owner: SignedUp;
  let ownerApp: { token: string; headers: Record<string, string> };
  let mcp: McpSession;
  const http = (path: string, init: RequestInit = {}) =>
    api.request(`/api/v1${path}`, { ...init, headers: { ...ownerApp.headers, ...(init.headers as Record<string, string> | undefined) } });

  before(async () => {
    api = await startApi({ workers: ['calls', 'webhooks'] });
    receiver = await startWebhookReceiver();
    owner = await activeOwner(api, { name: 'Asha Rao' });
    await holdNumbers(owner.workspaceId, FROM);
    ownerApp = await oauthTokenFor(owner.workspaceId, owner.userId);
    mcp = await connectMcp(api, ownerApp.token);
  });
  after(async () => {
    await mcp?.close();
    await receiver?.close();
    await api?.close();
  });

  it('lists the fourteen tools, each with the input schema of the operation it mirrors', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).to.deep.equal(TOOL_NAMES);
    const byName = new Map(tools.map((t) => [t.name, t]));
    const place = byName.get('place_call')!.inputSchema as unknown as {
      properties: Record<string, { pattern?: string }>;
      required: string[];
      additionalProperties: boolean;
    };
    expect(place.required.sort()).to.deep.equal(['agent_id', 'to_number']);
    expect(place.properties.to_number.pattern).to.equal('^\\+[1-9][0-9]{6,14}$');
    expect(place.additionalProperties).to.equal(false);
    const update = byName.get('update_agent')!.inputSchema as { properties: Record<string, unknown>; required: string[] };
    expect(update.required.sort()).to.deep.equal(['agent_id', 'name']);
    expect(update.properties).to.include.keys('llm', 'voice', 'call', 'tools', 'phone_number', 'status');
    const deliveries = byName.get('list_webhook_deliveries')!.inputSchema as { properties: Record<string, { maximum?: number }> };
    expect(deliveries.properties.limit.maximum).to.equal(200);
    expect(byName.get('get_call')!.annotations?.readOnlyHint).to.equal(true);
    expect(byName.get('hang_up_call')!.annotations?.destructiveHint).to.equal(true);
  });

  it('creates, reads, updates and lists agents as the HTTP API does', async () => {
    const created = await mcp.call('create_agent', { name: 'Front desk', welcome_message: 'Hello {name}' });
    expect(created.isError).to.equal(false);
    expect(created.body).to.include({ name: 'Front desk', welcome_message: 'Hello {name}', version: 1, updated_by: 'Asha Rao via Test App', status: 'active' });

    const got = await mcp.call('get_agent', { agent_id: created.body.id });
    expect(got.body).to.deep.equal(await (await http(`/agents/${created.body.id}`)).json());

    const updated = await mcp.call('update_agent', { agent_id: created.body.id, name: 'Front desk 2', status: 'paused' });
    expect(updated.body).to.include({ name: 'Front desk 2', status: 'paused', version: 2, welcome_message: '' });

    const listed = await mcp.call('list_agents');
    expect(listed.body).to.deep.equal(await (await http('/agents')).json());
    expect(listed.body.map((a: { id: string }) => a.id)).to.include(created.body.id);
  });

  it('answers a rule the schema cannot state with the same status and detail as HTTP, and refuses arguments outside the schema', async () => {
    const input = { name: 'Knows', knowledge_base_ids: [newId()] };
    const viaMcp = await mcp.call('create_agent', input);
    const viaHttp = await http('/agents', withJson('POST', input));
    expect(viaMcp.isError).to.equal(true);
    expect(viaHttp.status).to.equal(422);
    expect(viaMcp.body).to.deep.equal({ status: 422, ...(await viaHttp.json()) });

    const unknownField = await mcp.call('create_agent', { name: 'x', colour: 'blue' });
    expect(unknownField.isError).to.equal(true);
    expect(unknownField.body).to.match(/Input validation error/);
    const badNumber = await mcp.call('place_call', { agent_id: newId(), to_number: '98123' });
    expect(badNumber.isError).to.equal(true);
    expect(badNumber.body).to.match(/to_number/);
    expect(await mcp.call('get_agent', { agent_id: newId() })).to.deep.equal({ isError: true, body: { status: 404, detail: 'agent not found' } });
  });

  it('places a call, reads it with its timeline, lists it, hangs it up; a second hang-up is the HTTP 409', async () => {
    const agent = await agentsClient(api, owner.auth).created({ name: 'Queue tester', call: closedHours() });
    const placed = await mcp.call('place_call', { agent_id: agent.id, to_number: '+919812345678', from_number: FROM, user_data: { name: 'Ravi' } });
    expect(placed.isError).to.equal(false);
    expect(placed.body).to.include({ agent_id: agent.id, status: 'queued', direction: 'outbound', placed_by: 'Asha Rao' });
    const callId = placed.body.id;

    const read = await until(
      () => mcp.call('get_call', { call_id: callId }),
      (answer) => answer.body.timeline?.length > 0,
    );
    expect(read.body.call).to.deep.equal(await (await http(`/calls/${callId}`)).json());
    expect(read.body.call.transcript).to.deep.equal([]);
    expect(read.body.timeline).to.deep.equal(await (await http(`/calls/${callId}/events`)).json());
    expect(read.body.timeline[0]).to.deep.include({ type: 'call.queued', data: { position: 1, by: 'Asha Rao' } });

    const listed = await mcp.call('list_calls', { agent_id: agent.id, status: 'queued,ringing' });
    expect(listed.body).to.deep.equal(await (await http(`/calls?agent_id=${agent.id}&status=queued,ringing`)).json());
    expect(listed.body.total).to.equal(1);

    const hungUp = await mcp.call('hang_up_call', { call_id: callId });
    expect(hungUp.body).to.include({ id: callId, status: 'canceled', hangup_reason: 'canceled while queued', hangup_by: 'Asha Rao' });
    const again = await mcp.call('hang_up_call', { call_id: callId });
    const againHttp = await http(`/calls/${callId}/hangup`, { method: 'POST' });
    expect(againHttp.status).to.equal(409);
    expect(again).to.deep.equal({ isError: true, body: { status: 409, ...(await againHttp.json()) } });
  });

  it('reads the balance and the limits as GET /billing and GET /workspace/limits do', async () => {
    const balance = await mcp.call('get_balance');
    expect(balance.body).to.deep.equal(await (await http('/billing')).json());
    expect(balance.body.credits_paise).to.be.a('number');
    const limits = await mcp.call('get_limits');
    expect(limits.body).to.deep.equal(await (await http('/workspace/limits')).json());
    expect(limits.body).to.include.keys('concurrency_limit', 'active_calls', 'queued_calls', 'pending_request');
  });

  it('lists webhook deliveries and retries one: one more attempt reaches the receiver', async () => {
    const endpointRes = await http('/webhooks', withJson('POST', { url: `${receiver.url}/mcp-hooks`, events: ['call.completed'] }));
    expect(endpointRes.status).to.equal(201);
    const endpoint = await endpointRes.json();
    const ping = await (await http(`/webhooks/${endpoint.id}/test`, { method: 'POST' })).json();
    expect(ping.status).to.equal('delivered');
    const before = receiver.received.filter((r) => r.path === '/mcp-hooks').length;

    const listed = await mcp.call('list_webhook_deliveries', { endpoint_id: endpoint.id });
    expect(listed.body).to.deep.equal(await (await http(`/webhooks/deliveries?endpoint_id=${endpoint.id}`)).json());
    expect(listed.body.items.map((d: { id: string }) => d.id)).to.deep.equal([ping.id]);

    const retried = await mcp.call('retry_webhook_delivery', { delivery_id: ping.id });
    expect(retried.isError).to.equal(false);
    expect(retried.body).to.include({ id: ping.id, status: 'delivered' });
    expect(retried.body.attempts.map((a: { trigger: string }) => a.trigger)).to.deep.equal(['test', 'manual']);
    expect(receiver.received.filter((r) => r.path === '/mcp-hooks').length).to.equal(before + 1);

    const both = await mcp.call('list_webhook_deliveries', { endpoint_id: endpoint.id, agent: newId() });
    expect(both.body).to.deep.include({ status: 422 });
  });

  it("a viewer's app cannot place a call or hang one up (the HTTP 403), but reads calls", async () => {
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    const viewerApp = await oauthTokenFor(owner.workspaceId, viewer.userId);
    const viewerMcp = await connectMcp(api, viewerApp.token);
    try {
      const agent = await agentsClient(api, owner.auth).created({ name: 'Viewer test', call: closedHours() });
      const input = { agent_id: agent.id, to_number: '+919812340001', from_number: FROM };
      const refused = await viewerMcp.call('place_call', input);
      const refusedHttp = await api.request('/api/v1/calls', withJson('POST', input, viewerApp.headers));
      expect(refusedHttp.status).to.equal(403);
      expect(refused).to.deep.equal({ isError: true, body: { status: 403, ...(await refusedHttp.json()) } });
      expect(refused.body).to.deep.include({ permission: 'calls.place' });
      expect((await mcp.call('list_calls', { agent_id: agent.id })).body.total).to.equal(0);

      const call = await mcp.call('place_call', input);
      expect((await viewerMcp.call('hang_up_call', { call_id: call.body.id })).body).to.deep.include({ status: 403, permission: 'calls.place' });
      expect((await viewerMcp.call('get_call', { call_id: call.body.id })).body.call).to.include({ id: call.body.id, status: 'queued' });
      expect((await mcp.call('hang_up_call', { call_id: call.body.id })).body.status).to.equal('canceled');

      const created = await viewerMcp.call('create_agent', { name: 'Not mine to make' });
      expect(created.body).to.deep.include({ status: 403, permission: 'agents.edit' });
      expect((await viewerMcp.call('get_balance')).body).to.deep.include({ status: 403, permission: 'billing.view' });
      expect((await viewerMcp.call('list_calls')).isError).to.equal(false);
    } finally {
      await viewerMcp.close();
    }
  });

  it("another workspace's app reaches none of these records", async () => {
    const agent = await agentsClient(api, owner.auth).created({ name: 'Private', call: closedHours() });
    const call = await mcp.call('place_call', { agent_id: agent.id, to_number: '+919812340002', from_number: FROM });
    const delivery = (await mcp.call('list_webhook_deliveries', { limit: 1 })).body.items[0];
    expect(delivery, 'the earlier test left a delivery').to.not.equal(undefined);

    const stranger = await activeOwner(api, { name: 'Noor Khan' });
    const strangerMcp = await connectMcp(api, (await oauthTokenFor(stranger.workspaceId, stranger.userId)).token);
    try {
      expect((await strangerMcp.call('get_agent', { agent_id: agent.id })).body).to.deep.equal({ status: 404, detail: 'agent not found' });
      expect((await strangerMcp.call('update_agent', { agent_id: agent.id, name: 'Mine now' })).body).to.deep.include({ status: 404 });
      expect((await strangerMcp.call('get_call', { call_id: call.body.id })).body).to.deep.equal({ status: 404, detail: 'call not found' });
      expect((await strangerMcp.call('hang_up_call', { call_id: call.body.id })).body).to.deep.equal({ status: 404, detail: 'call not found' });
      expect((await strangerMcp.call('retry_webhook_delivery', { delivery_id: delivery.id })).body).to.deep.equal({
        status: 404,
        detail: 'webhook delivery not found',
      });
      expect((await strangerMcp.call('list_agents')).body).to.deep.equal([]);
      expect((await strangerMcp.call('list_calls')).body).to.deep.equal({ items: [], total: 0 });
      expect((await strangerMcp.call('list_webhook_deliveries')).body).to.deep.equal({ items: [], total: 0 });
      // Placing with another workspace's agent is the HTTP 422 at body.agent_id.
      const placed = await strangerMcp.call('place_call', { agent_id: agent.id, to_number: '+919812340003', from_number: FROM });
      expect(placed.body.status).to.equal(422);
      expect(placed.body.detail[0].loc).to.deep.equal(['body', 'agent_id']);
    } finally {
      await strangerMcp.close();
      await mcp.call('hang_up_call', { call_id: call.body.id });
    }
  });
});
