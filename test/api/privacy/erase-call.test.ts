import { expect } from 'chai';
import { createActivities, systemClock } from '../../../activities';
import { newId } from '../../../db/ids';
import { Call, type CallStatus } from '../../../db/models/call';
import { WebhookDelivery } from '../../../db/models/webhook-delivery';
import { saveRecording } from '../../../domain/calls/recording-store';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { createLocal } from '../../support/servers';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/** What the seeded call says about its caller: none of it may be readable after the erasure. */
const PERSONAL = ['+919812345670', 'Ravi Kumar', 'my account number is 4242', 'PAN ABCDE1234F', 'wants a refund'];

/**
 * `DELETE /calls/{id}` over HTTP with a real webhooks worker and receiver: a finished call's
 * events are recorded through the real fan-out (so its deliveries' bodies are stored as
 * production stores them), its recording saved by the recording store, then erased; every read
 * of the call shows what is left and none of the caller's data.
 */
describe('Erasing a call (DELETE /calls/{id})', function () {
  this.timeout(90_000);
  let api: RunningApi;
  let receiver: WebhookReceiver;
  let owner: SignedUp;
  let headers: Record<string, string>;
  let activities: ReturnType<typeof createActivities>;

  before(async () => {
    activities = createActivities({ clock: systemClock, temporal: createLocal().client, webhooksAllowPrivateNetworks: true });
    api = await startApi({ workers: ['webhooks'] });
    // The receiver echoes what it got: its answers, stored as excerpts, carry the caller's data too.
    receiver = await startWebhookReceiver((request) => ({ status: 200, body: request.rawBody }));
    owner = await activeOwner(api);
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
    const res = await api.request('/api/v1/webhooks', withJson('POST', { url: `${receiver.url}/hooks` }, headers));
    expect(res.status).to.equal(201);
  });
  after(async () => {
    await api.close();
    await receiver.close();
  });

  const seedCall = async (status: CallStatus): Promise<string> => {
    const id = newId();
    const at = new Date(Date.now() - 120_000);
    await Call.create({
      _id: id,
      workspace_id: owner.workspaceId,
      agent_name: 'Asha',
      direction: 'outbound',
      to_number: PERSONAL[0],
      from_number: '+918000000001',
      status,
      user_data: { name: PERSONAL[1], account: PERSONAL[2] },
      placed_by: 'Owner',
      started_at: at,
      ended_at: status === 'completed' ? new Date(at.getTime() + 60_000) : null,
      duration_seconds: status === 'completed' ? 60 : null,
      cost_paise: status === 'completed' ? 400 : null,
      hangup_by: status === 'completed' ? 'agent' : null,
      transcript: [
        { role: 'assistant', text: `Hello ${PERSONAL[1]}`, at },
        { role: 'user', text: `${PERSONAL[2]}, ${PERSONAL[3]}`, at },
      ],
      summary: `${PERSONAL[1]} ${PERSONAL[4]}`,
      extracted: { pan: PERSONAL[3] },
      created_at: at,
      updated_at: at,
    });
    return id;
  };

  const recordEvents = async (callId: string) => {
    const event = (sequence: number, type: string, message: string, data: Record<string, unknown>) =>
      activities.recordEvent({
        workspaceId: owner.workspaceId,
        callId,
        agentId: '',
        sequence,
        type,
        message,
        level: 'info',
        latencyMs: null,
        data,
        createdAt: new Date().toISOString(),
      });
    const recorded = [
      await event(0, 'call.started', 'outbound call with Asha', { channel: 'phone', from: '+918000000001', to: PERSONAL[0], values: ['name'] }),
      await event(1, 'user.turn', `${PERSONAL[2]}, ${PERSONAL[3]}`, {}),
      await event(2, 'call.ended', 'ended by agent: goodbye', { duration_seconds: 60, usage: { llm_calls: 2 } }),
      await event(3, 'call.completed', 'call completed', {
        call: { id: callId, to_number: PERSONAL[0], user_data: { name: PERSONAL[1] }, summary: PERSONAL[4], transcript_text: `user: ${PERSONAL[2]}` },
      }),
    ];
    const deliveryIds = recorded.flatMap((r) => r.deliveryIds);
    // Every delivery attempted (its answer stored) before the erasure.
    for (let i = 0; i < 200; i++) {
      const delivered = await WebhookDelivery.countDocuments({ _id: { $in: deliveryIds }, status: 'delivered' });
      if (delivered === deliveryIds.length) return deliveryIds;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the deliveries were never delivered');
  };

  const read = async (path: string, as = headers) => {
    const res = await api.request(`/api/v1${path}`, { headers: as });
    return { status: res.status, text: await res.text() };
  };
  const erase = (callId: string, as = headers) => api.request(`/api/v1/calls/${callId}`, { method: 'DELETE', headers: as });

  it('erases the recording, transcript, user_data, summary, extracted values, events’ texts and delivery bodies; keeps ids, times, duration, cost and status; audits who did it', async () => {
    const callId = await seedCall('completed');
    await saveRecording({ callId, workspaceId: owner.workspaceId, wav: Buffer.from(`RIFF....WAVE ${PERSONAL[1]}`), durationMs: 60_000 });
    const deliveryIds = await recordEvents(callId);
    expect(deliveryIds).to.have.length(4);

    // Before: the caller's data is there to read (the test would pass vacuously otherwise).
    const before = [await read(`/calls/${callId}`), await read(`/calls/${callId}/events`), await read(`/webhooks/deliveries/${deliveryIds[3]}`)];
    for (const secret of PERSONAL) expect(before.map((r) => r.text).join('\n')).to.include(secret);
    expect((await read(`/calls/${callId}/recording`)).status).to.equal(200);

    const admin = await memberWithRole(api, owner.workspaceId, 'admin');
    const res = await erase(callId, admin.headers);
    expect(res.status, await res.clone().text()).to.equal(200);
    const erased = await res.json();
    expect(erased).to.include({ id: callId, status: 'completed', duration_seconds: 60, cost_paise: 400, hangup_by: 'agent', to_number: '', summary: null });
    expect(erased.erased_at).to.be.a('string');
    expect(erased.transcript).to.deep.equal([]);
    expect(erased.user_data).to.deep.equal({});
    expect(erased.extracted).to.equal(null);
    expect(erased.started_at).to.be.a('string');

    const call = await read(`/calls/${callId}`);
    expect(JSON.parse(call.text).erased_at).to.equal(erased.erased_at);
    const events = await read(`/calls/${callId}/events`);
    const timeline = JSON.parse(events.text) as { type: string; message: string; data: Record<string, unknown> }[];
    expect(timeline.map((e) => e.type)).to.deep.equal(['call.started', 'user.turn', 'call.ended', 'call.completed']);
    expect(timeline.every((e) => e.message === '')).to.equal(true);
    expect(timeline[2].data).to.deep.equal({ duration_seconds: 60, usage: { llm_calls: 2 } });
    expect(await read(`/calls/${callId}/recording`)).to.include({ status: 404 });
    const list = await read(`/webhooks/deliveries?call_id=${callId}`);
    expect(JSON.parse(list.text).total).to.equal(4);
    const details = await Promise.all(deliveryIds.map((id) => read(`/webhooks/deliveries/${id}`)));
    for (const detail of details) expect(JSON.parse(detail.text).request_body.data.erased).to.equal(true);
    const everything = [call, events, list, ...details].map((r) => r.text).join('\n');
    for (const secret of PERSONAL) expect(everything, secret).not.to.include(secret);

    const audit = JSON.parse((await read('/audit-events?action=call.erased')).text) as { items: { actor: { id: string }; target: { id: string } }[] };
    expect(audit.items.map((e) => [e.actor.id, e.target.id])).to.deep.equal([[admin.userId, callId]]);

    // Again: the same answer, nothing more in the audit log.
    const again = await erase(callId);
    expect(again.status).to.equal(200);
    expect((await again.json()).erased_at).to.equal(erased.erased_at);
    expect(JSON.parse((await read('/audit-events?action=call.erased')).text).items).to.have.length(1);
  });

  for (const status of ['queued', 'ringing', 'in-progress'] as const) {
    it(`refuses a ${status} call with 409 in the contract's error shape, and changes nothing`, async () => {
      const callId = await seedCall(status);
      const res = await erase(callId);
      expect(res.status).to.equal(409);
      const body = await res.json();
      expect(body.detail).to.be.a('string').and.include(status);
      const call = await Call.findById(callId).lean();
      expect(call?.erased_at).to.equal(null);
      expect(call?.user_data).to.deep.equal({ name: PERSONAL[1], account: PERSONAL[2] });
    });
  }

  it('is for owners and admins only: a developer, a viewer and an API key get 403 naming calls.erase', async () => {
    const callId = await seedCall('completed');
    const key = await apiKeyFor(owner.workspaceId);
    for (const as of [
      (await memberWithRole(api, owner.workspaceId, 'developer')).headers,
      (await memberWithRole(api, owner.workspaceId, 'viewer')).headers,
      key.headers,
    ]) {
      const res = await erase(callId, as);
      expect(res.status).to.equal(403);
      expect((await res.json()).detail).to.include('calls.erase');
    }
    expect((await Call.findById(callId).lean())?.summary).to.include(PERSONAL[4]);
  });

  it("answers 404 for another workspace's call", async () => {
    const callId = await seedCall('completed');
    const stranger = await activeOwner(api);
    const res = await erase(callId, { ...stranger.auth, 'X-Workspace-ID': stranger.workspaceId });
    expect(res.status).to.equal(404);
    expect((await Call.findById(callId).lean())?.erased_at).to.equal(null);
  });
});
