import { expect } from 'chai';
import { appendLedgerItem, balanceOf } from '../../../domain/billing/ledger';
import { newId } from '../../../db/ids';
import { QueuedCall } from '../../../db/models/queued-call';
import { Agent } from '../../../db/models/agent';
import { activeOwner, apiKeyFor, holdNumbers, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { randomNumbers } from '../../support/providers';
import { startApi, type ApiResponse, type RunningApi } from '../../support/api';
import { agentsClient } from '../agents/helpers';
import { until } from '../../support/until';
import { createLocal } from '../../support/servers';
import { callWorkflowId } from '../../../contracts/calls';

/** Calling hours that are closed now (UTC), so that placed calls stay queued for the test. */
/** Caller numbers: two of the owner's, one of another workspace, one of a broke one, one nobody holds. */
const [FROM, FROM_2, OTHERS_FROM, BROKES_FROM, NOBODYS] = randomNumbers(5);

function closedHours() {
  const hour = new Date().getUTCHours();
  return hour < 12 ? { call_start_hour: 20, call_end_hour: 21, timezone: 'UTC' } : { call_start_hour: 2, call_end_hour: 3, timezone: 'UTC' };
}

describe('Calls: placing, reading and hanging up queued calls', function () {
  this.timeout(120_000);
  let api: RunningApi;
  let owner: SignedUp;
  let agentId: string;
  const place = (body: unknown, headers = owner.auth): Promise<ApiResponse> => api.request('/api/v1/calls', withJson('POST', body, headers));
  const events = async (callId: string, headers = owner.auth) => (await api.request(`/api/v1/calls/${callId}/events`, { headers })).json();

  before(async () => {
    api = await startApi({ workers: ['calls', 'webhooks'] });
    owner = await activeOwner(api, { name: 'Asha Rao' });
    await holdNumbers(owner.workspaceId, FROM, FROM_2);
    const agent = await agentsClient(api, owner.auth).created({ name: 'Queue tester', call: closedHours() });
    agentId = agent.id;
  });
  after(() => api.close());

  it('queues a call (201, status queued, who placed it) and records call.queued with its position', async () => {
    const first = await place({ agent_id: agentId, to_number: '+919812345678', from_number: FROM, user_data: { name: 'Ravi' } });
    expect(first.status).to.equal(201);
    const call = await first.json();
    expect(call).to.include({
      agent_id: agentId,
      agent_name: 'Queue tester',
      direction: 'outbound',
      to_number: '+919812345678',
      from_number: FROM,
      status: 'queued',
      placed_by: 'Asha Rao',
    });
    expect(call.user_data).to.deep.equal({ name: 'Ravi' });
    expect(call.id).to.match(/^[0-9a-f]{32}$/);

    const key = await apiKeyFor(owner.workspaceId, 'dialler');
    const second = await (await place({ agent_id: agentId, to_number: '+919812345679', from_number: FROM }, key.headers)).json();
    expect(second.placed_by).to.equal('key:dialler');

    type TimelineEntry = { type: string; level: string; data: Record<string, unknown> };
    const queuedOf = async (id: string): Promise<TimelineEntry | undefined> =>
      (
        await until(
          () => events(id),
          (list: TimelineEntry[]) => list.length > 0,
        )
      ).find((e: TimelineEntry) => e.type === 'call.queued');
    expect((await queuedOf(call.id))?.data).to.deep.equal({ position: 1, by: 'Asha Rao' });
    expect((await queuedOf(second.id))?.data).to.deep.equal({ position: 2, by: 'key:dialler' });
    expect((await queuedOf(second.id))?.level).to.equal('info');

    const got = await (await api.request(`/api/v1/calls/${call.id}`, { headers: owner.auth })).json();
    expect(got).to.deep.include({ id: call.id, status: 'queued', transcript: [], cost_paise: null });
  });

  it('hangs up a queued call: canceled, not charged, call.ended "canceled while queued"; a second hang-up is 409', async () => {
    const balanceBefore = await balanceOf(owner.workspaceId);
    const call = await (await place({ agent_id: agentId, to_number: '+919812340000', from_number: FROM })).json();
    await until(
      () => events(call.id),
      (list: unknown[]) => list.length > 0,
    );
    const res = await api.request(`/api/v1/calls/${call.id}/hangup`, { method: 'POST', headers: owner.auth });
    expect(res.status).to.equal(200);
    const ended = await res.json();
    expect(ended).to.include({ status: 'canceled', hangup_reason: 'canceled while queued', hangup_by: 'Asha Rao', cost_paise: null });
    const timeline = await until(
      () => events(call.id),
      (list: { type: string }[]) => list.some((e) => e.type === 'call.ended'),
    );
    expect(timeline.map((e: { type: string }) => e.type)).to.deep.equal(['call.queued', 'call.ended']);
    expect(timeline[1]).to.include({ message: 'canceled while queued', level: 'info' });
    expect(await balanceOf(owner.workspaceId)).to.equal(balanceBefore);
    expect((await api.request(`/api/v1/calls/${call.id}/hangup`, { method: 'POST', headers: owner.auth })).status).to.equal(409);
  });

  it('counts positions among the calls still waiting: one hung up while queued no longer counts', async () => {
    const other = await activeOwner(api, { name: 'Noor Khan' });
    await holdNumbers(other.workspaceId, OTHERS_FROM);
    const agent = await agentsClient(api, other.auth).created({ name: 'Line keeper', call: closedHours() });
    const placeIn = async (to: string) => (await place({ agent_id: agent.id, to_number: to, from_number: OTHERS_FROM }, other.auth)).json();
    const positionOf = async (id: string) => {
      type Entry = { type: string; data: { position?: number } };
      const timeline: Entry[] = await until(
        () => events(id, other.auth),
        (list: Entry[]) => list.some((e) => e.type === 'call.queued'),
      );
      return timeline.find((e) => e.type === 'call.queued')?.data.position;
    };
    const first = await placeIn('+919812342001');
    const second = await placeIn('+919812342002');
    expect([await positionOf(first.id), await positionOf(second.id)]).to.deep.equal([1, 2]);

    expect((await api.request(`/api/v1/calls/${first.id}/hangup`, { method: 'POST', headers: other.auth })).status).to.equal(200);
    expect(await QueuedCall.findById(first.id).lean()).to.equal(null);
    const third = await placeIn('+919812342003');
    expect(await positionOf(third.id)).to.equal(2);
    expect(await QueuedCall.findById(third.id).lean()).to.deep.include({ workspace_id: other.workspaceId });
  });

  it('deleting an agent cancels its queued calls with "agent deleted"', async () => {
    const doomed = await agentsClient(api, owner.auth).created({ name: 'Doomed', call: closedHours() });
    const call = await (await place({ agent_id: doomed.id, to_number: '+919812341111', from_number: FROM })).json();
    await until(
      () => events(call.id),
      (list: unknown[]) => list.length > 0,
    );
    expect((await agentsClient(api, owner.auth).remove(doomed.id)).status).to.equal(204);
    const timeline = await until(
      () => events(call.id),
      (list: { type: string }[]) => list.some((e) => e.type === 'call.ended'),
    );
    expect(timeline.map((e: { type: string }) => e.type)).to.deep.equal(['call.queued', 'call.ended']);
    expect(timeline[1]).to.include({ message: 'agent deleted', level: 'warning' });
    const after = await (await api.request(`/api/v1/calls/${call.id}`, { headers: owner.auth })).json();
    expect(after).to.include({ status: 'canceled', hangup_reason: 'agent deleted' });
    // The workflow's result names the refusal by type (a batch pauses or cancels on it, never on the text).
    const result = await createLocal().client.workflow.getHandle(callWorkflowId(call.id)).result();
    expect(result).to.include({ status: 'canceled', refusal: 'AgentDeleted' });
  });

  it('refuses: no caller number 400, paused agent 409, unknown agent 422, bad number 422, out of credits 402', async () => {
    const noNumber = await place({ agent_id: agentId, to_number: '+919812345678' });
    expect(noNumber.status).to.equal(400);
    expect((await noNumber.json()).detail).to.match(/caller number/);

    const paused = await agentsClient(api, owner.auth).created({ name: 'Resting', status: 'paused' });
    const toPaused = await place({ agent_id: paused.id, to_number: '+919812345678', from_number: FROM });
    expect(toPaused.status).to.equal(409);
    expect((await toPaused.json()).detail).to.match(/paused/);

    const unknown = await place({ agent_id: newId(), to_number: '+919812345678', from_number: FROM });
    expect(unknown.status).to.equal(422);
    expect((await unknown.json()).detail[0].loc).to.deep.equal(['body', 'agent_id']);
    expect((await place({ agent_id: agentId, to_number: '98123', from_number: FROM })).status).to.equal(422);

    const broke = await activeOwner(api);
    await holdNumbers(broke.workspaceId, BROKES_FROM);
    const brokeAgent = await agentsClient(api, broke.auth).created({ name: 'Broke' });
    await appendLedgerItem({
      workspaceId: broke.workspaceId,
      kind: 'adjustment',
      amountPaise: -(await balanceOf(broke.workspaceId)),
      idempotencyKey: `test-zero-${broke.workspaceId}`,
      at: new Date(),
    });
    const refused = await place({ agent_id: brokeAgent.id, to_number: '+919812345678', from_number: BROKES_FROM }, broke.auth);
    expect(refused.status).to.equal(402);
    expect((await refused.json()).detail).to.match(/add credits in billing/);
    const listed = await (await api.request('/api/v1/calls', { headers: broke.auth })).json();
    expect(listed.total).to.equal(0);
  });

  it("refuses at once (400) a caller number the workspace does not hold: given, or the agent's own; nothing is queued", async () => {
    const before = (await (await api.request('/api/v1/calls', { headers: owner.auth })).json()).total;
    // Nobody's number, and another workspace's: the provider would refuse both at the dial.
    for (const from of [NOBODYS, OTHERS_FROM]) {
      const res = await place({ agent_id: agentId, to_number: '+919812345678', from_number: from });
      expect(res.status).to.equal(400);
      const { detail } = await res.json();
      expect(detail).to.include(`from_number ${from} is not a number of this workspace`);
      expect(detail).to.include('POST /phone-numbers');
    }
    // The agent's phone_number, left behind after its number was released (the agent field is
    // derived from the number record and may lag it after a crash).
    const stale = await agentsClient(api, owner.auth).created({ name: 'Stale number', call: closedHours() });
    await Agent.updateOne({ _id: stale.id }, { $set: { phone_number: NOBODYS } });
    const res = await place({ agent_id: stale.id, to_number: '+919812345678' });
    expect(res.status).to.equal(400);
    expect((await res.json()).detail).to.include(`the agent's phone_number ${NOBODYS} is not a number of this workspace`);
    expect((await (await api.request('/api/v1/calls', { headers: owner.auth })).json()).total).to.equal(before);
  });

  it('lists newest first with filters and pages; another workspace sees nothing of it', async () => {
    const other = await agentsClient(api, owner.auth).created({ name: 'Other agent', call: closedHours() });
    const a = await (await place({ agent_id: other.id, to_number: '+919800000001', from_number: FROM_2 })).json();
    const b = await (await place({ agent_id: other.id, to_number: '+919800000002', from_number: FROM_2 })).json();
    const list = async (query: string) => (await api.request(`/api/v1/calls?${query}`, { headers: owner.auth })).json();
    const byAgent = await list(`agent_id=${other.id}`);
    expect(byAgent.total).to.equal(2);
    expect(byAgent.items.map((c: { id: string }) => c.id)).to.deep.equal([b.id, a.id]);
    expect((await list(`agent_id=${other.id}&limit=1&skip=1`)).items.map((c: { id: string }) => c.id)).to.deep.equal([a.id]);
    expect((await list(`number=%2B919800000002`)).items.map((c: { id: string }) => c.id)).to.deep.equal([b.id]);
    expect((await list(`agent_id=${other.id}&status=completed,canceled`)).total).to.equal(0);
    expect((await list(`agent_id=${other.id}&direction=inbound`)).total).to.equal(0);
    expect((await list(`agent_id=${other.id}&from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).total).to.equal(0);
    for (const bad of ['limit=0', 'limit=201', 'skip=-1', 'status=bogus', 'direction=sideways']) {
      expect((await api.request(`/api/v1/calls?${bad}`, { headers: owner.auth })).status, bad).to.equal(422);
    }

    const stranger = await activeOwner(api);
    expect((await api.request(`/api/v1/calls/${a.id}`, { headers: stranger.auth })).status).to.equal(404);
    expect((await api.request(`/api/v1/calls/${a.id}/events`, { headers: stranger.auth })).status).to.equal(404);
    expect((await api.request(`/api/v1/calls/${a.id}/hangup`, { method: 'POST', headers: stranger.auth })).status).to.equal(404);
    expect((await (await api.request('/api/v1/calls', { headers: stranger.auth })).json()).total).to.equal(0);
  });

  it('needs calls.place to place and hang up, calls.view to read', async () => {
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    expect((await place({ agent_id: agentId, to_number: '+919812345678', from_number: FROM }, viewer.headers)).status).to.equal(403);
    expect((await api.request('/api/v1/calls', { headers: viewer.headers })).status).to.equal(200);
  });
});
