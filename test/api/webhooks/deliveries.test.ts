import { expect } from 'chai';
import { createActivities, systemClock } from '../../../activities';
import { newId } from '../../../db/ids';
import { WebhookDelivery } from '../../../db/models/webhook-delivery';
import { deliveryIdFor } from '../../../domain/webhooks/ids';
import { freePort } from '../../../scripts/infra/processes';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { createLocal } from '../../support/servers';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../../support/webhook-receiver';
import { receiverAccepts } from '../../support/webhooks';

const UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Deliveries over HTTP with a real webhooks worker on the dev server and a real receiver. */
describe('Webhook deliveries', function () {
  this.timeout(90_000);
  let api: RunningApi;
  let receiver: WebhookReceiver;
  let owner: SignedUp;
  let headers: Record<string, string>;
  let activities: ReturnType<typeof createActivities>;

  before(async () => {
    activities = createActivities({ clock: systemClock, temporal: createLocal().client, webhooksAllowPrivateNetworks: true });
    api = await startApi({ workers: ['webhooks'] });
    receiver = await startWebhookReceiver();
    owner = await activeOwner(api);
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
  });
  after(async () => {
    await api.close();
    await receiver.close();
  });

  /** Answers by path: each test gives its endpoint a path of its own. */
  const routes = new Map<
    string,
    (request: ReceivedWebhook, nth: number) => { status?: number; delayMs?: number; hang?: boolean; headers?: Record<string, string>; body?: string }
  >();
  beforeEach(() =>
    receiver.behave((request) => {
      const route = routes.get(request.path);
      return route ? route(request, receiver.received.filter((r) => r.path === request.path).length) : { status: 200 };
    }),
  );
  const at = (path: string) => receiver.received.filter((r) => r.path === path);
  const path = (label: string) => `/${label}/${newId()}`;

  const createEndpoint = async (body: Record<string, unknown>) => {
    const res = await api.request('/api/v1/webhooks', withJson('POST', body, headers));
    expect(res.status).to.equal(201);
    return res.json() as Promise<{ id: string; secret: string }>;
  };
  const get = async (url: string) => {
    const res = await api.request(`/api/v1${url}`, { headers });
    expect(res.status, url).to.equal(200);
    return res.json();
  };
  const post = (url: string, body?: unknown) =>
    api.request(`/api/v1${url}`, body === undefined ? { method: 'POST', headers } : withJson('POST', body, headers));
  let sequence = 0;
  const emit = (fields: { callId?: string; agentId?: string; type?: string; sequence?: number; agentWebhookUrl?: string | null } = {}) =>
    activities.recordEvent({
      workspaceId: owner.workspaceId,
      callId: fields.callId ?? newId(),
      agentId: fields.agentId ?? '',
      sequence: fields.sequence ?? sequence++,
      type: fields.type ?? 'call.started',
      message: 'outbound call with Asha',
      level: 'info',
      latencyMs: null,
      data: { channel: 'phone', from: '+918000000001', to: '+919000000001', values: ['name'] },
      createdAt: new Date().toISOString(),
      ...(fields.agentWebhookUrl !== undefined ? { agentWebhookUrl: fields.agentWebhookUrl } : {}),
    });
  /** The delivery of a recorded event to one endpoint (the workspace may have others). */
  const deliveryTo = (recorded: { eventId: string; deliveryIds: string[] }, endpointId: string) => {
    const id = deliveryIdFor(recorded.eventId, `endpoint:${endpointId}`);
    expect(recorded.deliveryIds).to.include(id);
    return id;
  };
  const untilStatus = async (deliveryId: string, statuses: string[]) => {
    for (let i = 0; i < 200; i++) {
      const delivery = await WebhookDelivery.findById(deliveryId).lean();
      if (delivery && statuses.includes(delivery.status)) return delivery;
      await sleep(50);
    }
    throw new Error(`delivery ${deliveryId} never reached ${statuses.join(' or ')}`);
  };

  it('fans one event out to every matching target with the same event id, signed as the contract says, and only once when recorded again', async () => {
    const all = path('all');
    const ended = path('ended-only');
    const inactive = path('inactive');
    const agentPath = path('agent');
    const a = await createEndpoint({ url: receiver.url + all });
    await createEndpoint({ url: receiver.url + ended, events: ['call.ended'] });
    await createEndpoint({ url: receiver.url + inactive, active: false });
    const agent = await (await api.request('/api/v1/agents', withJson('POST', { name: 'Hooked', webhook_url: receiver.url + agentPath }, headers))).json();
    const { secret: defaultSecret } = await (await post('/webhooks/default-secret/rotate')).json();

    const callId = newId();
    const first = await emit({ callId, agentId: agent.id, sequence: 0 });
    expect(first.deliveryIds).to.have.length(2);
    const [toEndpoint] = await receiver
      .waitForRequests(0)
      .then(() => Promise.all([untilStatus(first.deliveryIds[0], ['delivered']), untilStatus(first.deliveryIds[1], ['delivered'])]));
    expect(toEndpoint.event_id).to.match(/^evt_[0-9a-f]{32}$/);
    const [endpointRequest] = at(all);
    const [agentRequest] = at(agentPath);
    expect(at(ended)).to.have.length(0);
    expect(at(inactive)).to.have.length(0);

    expect(endpointRequest.headers).to.include({
      'content-type': 'application/json',
      'user-agent': 'Service-Webhooks/1.0',
      'x-service-event': 'call.started',
    });
    expect(endpointRequest.headers['x-service-delivery']).to.match(/^whd_[0-9a-f]{32}$/);
    expect(endpointRequest.headers['x-service-signature']).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    const body = JSON.parse(endpointRequest.rawBody);
    expect(body).to.deep.equal({
      id: toEndpoint.event_id,
      type: 'call.started',
      created_at: body.created_at,
      workspace_id: owner.workspaceId,
      call_id: callId,
      agent_id: agent.id,
      data: {
        message: 'outbound call with Asha',
        level: 'info',
        latency_ms: null,
        channel: 'phone',
        from: '+918000000001',
        to: '+919000000001',
        values: ['name'],
      },
    });
    expect(body.created_at).to.match(UTC);
    expect(JSON.parse(agentRequest.rawBody).id).to.equal(body.id);
    expect(await receiverAccepts(endpointRequest, a.secret)).to.equal(true);
    expect(await receiverAccepts(agentRequest, defaultSecret)).to.equal(true);
    expect(await receiverAccepts(agentRequest, a.secret)).to.equal(false);

    // The same event recorded again (a retried activity): the same ids, nothing sent twice.
    const again = await emit({ callId, agentId: agent.id, sequence: 0 });
    expect(again).to.deep.equal(first);
    await sleep(500);
    expect(at(all)).to.have.length(1);
    expect(at(agentPath)).to.have.length(1);
    expect(await WebhookDelivery.countDocuments({ event_id: body.id })).to.equal(2);
  });

  it("sends a call's event to the agent URL the call read (decision 0155), not the one stored since; none when the call read none", async () => {
    const agent = await (await api.request('/api/v1/agents', withJson('POST', { name: 'Changed', webhook_url: `${receiver.url}/agent-now` }, headers))).json();
    const readByTheCall = await emit({ agentId: agent.id, type: 'call.ended', agentWebhookUrl: `${receiver.url}/agent-as-read` });
    const agentDeliveries = await WebhookDelivery.find({ _id: { $in: readByTheCall.deliveryIds }, target: 'agent' }).lean();
    expect(agentDeliveries.map((d) => d.url)).to.deep.equal([`${receiver.url}/agent-as-read`]);
    const none = await emit({ agentId: agent.id, type: 'call.ended', agentWebhookUrl: null });
    expect(await WebhookDelivery.countDocuments({ _id: { $in: none.deliveryIds }, target: 'agent' })).to.equal(0);
    // Without it (analytics, older histories) the fan-out reads the agent.
    const read = await emit({ agentId: agent.id, type: 'call.ended' });
    expect((await WebhookDelivery.find({ _id: { $in: read.deliveryIds }, target: 'agent' }).lean()).map((d) => d.url)).to.deep.equal([
      `${receiver.url}/agent-now`,
    ]);
  });

  it('sends a ping once, never retried, and answers the delivery with the target response', async () => {
    const ok = path('ping-ok');
    const down = path('ping-down');
    routes.set(ok, () => ({ status: 200, body: '{"received":true}' }));
    routes.set(down, () => ({ status: 500, body: 'boom' }));
    const good = await createEndpoint({ url: receiver.url + ok, events: ['call.ended'] });
    const bad = await createEndpoint({ url: receiver.url + down });

    const res = await post(`/webhooks/${good.id}/test`);
    expect(res.status, await res.clone().text()).to.equal(200);
    const delivery = await res.json();
    expect(delivery).to.include({ status: 'delivered', event_id: 'evt_ping', event_type: 'ping', call_id: '', attempt_count: 1, last_status_code: 200 });
    expect(delivery.last_response).to.include({ status_code: 200, body_excerpt: '{"received":true}', error: null });
    expect(delivery.attempts).to.have.length(1);
    expect(delivery.attempts[0]).to.include({ trigger: 'test', status_code: 200 });
    const [ping] = at(ok);
    expect(JSON.parse(ping.rawBody)).to.deep.include({ id: 'evt_ping', type: 'ping', call_id: '', agent_id: '', workspace_id: owner.workspaceId });
    expect(JSON.parse(ping.rawBody).data).to.include({ level: 'info', latency_ms: null });
    expect(JSON.parse(ping.rawBody).data.message).to.be.a('string').and.not.equal('');
    expect(await receiverAccepts(ping, good.secret)).to.equal(true);

    const failed = await (await post(`/webhooks/${bad.id}/test`)).json();
    expect(failed).to.include({ status: 'failed', attempt_count: 1, last_status_code: 500, next_attempt_at: null });
    const description = await createLocal().client.workflow.getHandle(failed.id).describe();
    expect(description.status.name).to.equal('COMPLETED'); // nothing is left to retry it
    expect(at(down)).to.have.length(1);
  });

  it('treats a 3xx as a failure and never follows it', async () => {
    const moved = path('moved');
    routes.set(moved, () => ({ status: 302, headers: { location: `${receiver.url}/elsewhere` } }));
    const endpoint = await createEndpoint({ url: receiver.url + moved });
    const delivery = await (await post(`/webhooks/${endpoint.id}/test`)).json();
    expect(delivery).to.include({ status: 'failed', last_status_code: 302 });
    expect(delivery.last_response.error).to.match(/redirect.*not followed/);
    expect(receiver.received.filter((r) => r.path === '/elsewhere')).to.have.length(0);
  });

  it('gives the target 10 seconds: an answer after 9.5 s is delivered, none by 10 s is a timeout', async () => {
    const slow = path('slow');
    const silent = path('silent');
    routes.set(slow, () => ({ status: 200, delayMs: 9_500 }));
    routes.set(silent, () => ({ hang: true }));
    const [a, b] = await Promise.all([createEndpoint({ url: receiver.url + slow }), createEndpoint({ url: receiver.url + silent })]);
    const [inTime, timedOut] = await Promise.all([post(`/webhooks/${a.id}/test`).then((r) => r.json()), post(`/webhooks/${b.id}/test`).then((r) => r.json())]);
    expect(inTime).to.include({ status: 'delivered', last_status_code: 200 });
    expect(timedOut).to.include({ status: 'failed', last_status_code: null });
    expect(timedOut.last_response.error).to.equal('no complete answer within 10 s');
    expect(timedOut.last_response.latency_ms).to.be.within(10_000, 11_000);
  });

  it('records a refused connection as a failed attempt', async () => {
    const endpoint = await createEndpoint({ url: `http://127.0.0.1:${await freePort()}/nobody` });
    const delivery = await (await post(`/webhooks/${endpoint.id}/test`)).json();
    expect(delivery).to.include({ status: 'failed', last_status_code: null });
    expect(delivery.last_response.error).to.match(/refused the connection/);
  });

  it('makes a manual retry while retrying one extra attempt that ends the schedule, signed with a secret rotated in between', async () => {
    const flaky = path('flaky');
    routes.set(flaky, (_request, nth) => ({ status: nth === 0 ? 503 : 200 }));
    const endpoint = await createEndpoint({ url: receiver.url + flaky });
    const deliveryIds = [deliveryTo(await emit(), endpoint.id)];
    const retrying = await untilStatus(deliveryIds[0], ['retrying']);
    expect(retrying.next_attempt_at!.getTime() - retrying.last_response!.at!.getTime()).to.be.within(10_000, 10_000 + 1_000);

    const rotated = await (await post(`/webhooks/${endpoint.id}/rotate-secret`)).json();
    const res = await post(`/webhooks/deliveries/${deliveryIds[0]}/retry`);
    expect(res.status).to.equal(200);
    const delivery = await res.json();
    expect(delivery).to.include({ status: 'delivered', attempt_count: 2, next_attempt_at: null });
    expect(delivery.attempts.map((a: { trigger: string; status_code: number }) => [a.trigger, a.status_code])).to.deep.equal([
      ['automatic', 503],
      ['manual', 200],
    ]);
    const [first, second] = at(flaky);
    expect(await receiverAccepts(first, endpoint.secret)).to.equal(true);
    expect(await receiverAccepts(second, endpoint.secret)).to.equal(false);
    expect(await receiverAccepts(second, rotated.secret)).to.equal(true);
    expect(second.headers['x-service-delivery']).to.equal(first.headers['x-service-delivery']);
    const description = await createLocal().client.workflow.getHandle(deliveryIds[0]).describe();
    expect(description.status.name).to.equal('COMPLETED');
  });

  it('retries a failed delivery (schedule ended) as one attempt: a failure keeps it failed, a success delivers it', async () => {
    const later = path('later');
    let up = false;
    routes.set(later, () => ({ status: up ? 200 : 500 }));
    const endpoint = await createEndpoint({ url: receiver.url + later });
    const failed = await (await post(`/webhooks/${endpoint.id}/test`)).json();
    expect(failed.status).to.equal('failed');

    const stillDown = await (await post(`/webhooks/deliveries/${failed.id}/retry`)).json();
    expect(stillDown).to.include({ status: 'failed', attempt_count: 2 });
    up = true;
    const delivered = await (await post(`/webhooks/deliveries/${failed.id}/retry`)).json();
    expect(delivered).to.include({ status: 'delivered', attempt_count: 3, last_status_code: 200 });
    expect(delivered.attempts.map((a: { trigger: string }) => a.trigger)).to.deep.equal(['test', 'manual', 'manual']);
    expect(new Set(at(later).map((r) => r.headers['x-service-delivery']))).to.deep.equal(new Set([failed.id]));
  });

  it('fails the pending and retrying deliveries of a deleted endpoint and stops their workflows', async () => {
    const doomed = path('doomed');
    routes.set(doomed, () => ({ status: 500 }));
    const endpoint = await createEndpoint({ url: receiver.url + doomed });
    const deliveryIds = [deliveryTo(await emit(), endpoint.id)];
    await untilStatus(deliveryIds[0], ['retrying']);
    expect((await api.request(`/api/v1/webhooks/${endpoint.id}`, { method: 'DELETE', headers })).status).to.equal(204);
    const delivery = await get(`/webhooks/deliveries/${deliveryIds[0]}`);
    expect(delivery).to.include({ status: 'failed', failure_reason: 'endpoint deleted', next_attempt_at: null });
    const handle = createLocal().client.workflow.getHandle(deliveryIds[0]);
    await handle.result();
    expect((await handle.describe()).status.name).to.be.oneOf(['COMPLETED', 'CANCELLED']);
    expect((await WebhookDelivery.findById(deliveryIds[0]).lean())?.status).to.equal('failed');
    expect((await post(`/webhooks/deliveries/${deliveryIds[0]}/retry`)).status).to.equal(409);
  });

  describe('listing', () => {
    let endpointA: string;
    let endpointB: string;
    let agentId: string;
    let callId: string;
    const ids: string[] = [];
    before(async () => {
      const other = await activeOwner(api);
      const otherHeaders = { ...other.auth, 'X-Workspace-ID': other.workspaceId };
      headers = { ...other.auth, 'X-Workspace-ID': other.workspaceId }; // a fresh workspace: exact totals
      owner = other;
      const a = path('list-a');
      const b = path('list-b');
      routes.set(b, () => ({ status: 500 }));
      endpointA = (await createEndpoint({ url: receiver.url + a })).id;
      endpointB = (await createEndpoint({ url: receiver.url + b })).id;
      agentId = (
        await (await api.request('/api/v1/agents', withJson('POST', { name: 'Lister', webhook_url: receiver.url + path('list-agent') }, otherHeaders))).json()
      ).id;
      callId = newId();
      for (let i = 0; i < 4; i++) {
        const recorded = await emit({ callId: i < 2 ? callId : undefined, agentId: i === 3 ? agentId : '', sequence: i });
        ids.push(...recorded.deliveryIds);
      }
      for (const id of ids) await untilStatus(id, ['delivered', 'retrying']);
    });

    const list = (query: string) => api.request(`/api/v1/webhooks/deliveries?${query}`, { headers });

    it('filters by endpoint, agent, status (comma list) and call, newest first, with total', async () => {
      const res = await list('');
      const all = await res.json();
      expect(all.total, JSON.stringify(all)).to.equal(9); // 4 events x 2 endpoints + 1 agent delivery
      expect(all.items).to.have.length(9);
      const created = all.items.map((d: { created_at: string }) => Date.parse(d.created_at));
      expect(created).to.deep.equal([...created].sort((x, y) => y - x));

      const ofA = await (await list(`endpoint_id=${endpointA}`)).json();
      expect(ofA.total).to.equal(4);
      expect(ofA.items.every((d: { endpoint_id: string }) => d.endpoint_id === endpointA)).to.equal(true);
      const ofAgent = await (await list(`agent=${agentId}`)).json();
      expect(ofAgent.items.map((d: { target: string }) => d.target)).to.deep.equal(['agent']);
      const retrying = await (await list('status=retrying')).json();
      expect(retrying.total).to.equal(4);
      expect(retrying.items.every((d: { endpoint_id: string }) => d.endpoint_id === endpointB)).to.equal(true);
      const both = await (await list('status=retrying,delivered')).json();
      expect(both.total, JSON.stringify(both)).to.equal(9);
      expect((await (await list('status=failed')).json()).total).to.equal(0);
      const ofCall = await (await list(`call_id=${callId}`)).json();
      expect(ofCall.total).to.equal(4);
      expect((await (await list(`call_id=${callId}&endpoint_id=${endpointB}&status=retrying`)).json()).total).to.equal(2);
    });

    it('pages with limit and skip', async () => {
      const all = (await (await list('limit=200')).json()).items.map((d: { id: string }) => d.id);
      const page = await (await list('limit=4&skip=3')).json();
      expect(page.total).to.equal(9);
      expect(page.items.map((d: { id: string }) => d.id)).to.deep.equal(all.slice(3, 7));
      expect((await (await list('skip=9')).json()).items).to.have.length(0);
      expect((await (await list('')).json()).items).to.have.length(9); // default 50
    });

    it('refuses bad filters with 422 and names them', async () => {
      for (const query of [
        'limit=0',
        'limit=201',
        'skip=-1',
        'status=sent',
        'status=failed,',
        'endpoint_id=we_123',
        `endpoint_id=${endpointA}&agent=${agentId}`,
      ]) {
        const res = await list(query);
        expect(res.status, query).to.equal(422);
        expect((await res.json()).detail[0].loc[0], query).to.equal('query');
      }
    });

    it('answers one delivery with its body, last response and attempts; another workspace gets 404', async () => {
      const delivery = await get(`/webhooks/deliveries/${ids[0]}`);
      expect(delivery.request_body).to.include({ type: 'call.started', workspace_id: owner.workspaceId });
      expect(delivery.attempts[0]).to.have.keys(['at', 'trigger', 'status_code', 'latency_ms', 'error', 'response_excerpt']);
      expect(delivery.last_response).to.have.keys(['at', 'status_code', 'latency_ms', 'error', 'body_excerpt']);
      const stranger = await activeOwner(api);
      const res = await api.request(`/api/v1/webhooks/deliveries/${ids[0]}`, { headers: { ...stranger.auth, 'X-Workspace-ID': stranger.workspaceId } });
      expect(res.status).to.equal(404);
      expect(
        (
          await api.request(`/api/v1/webhooks/deliveries/${ids[0]}/retry`, {
            method: 'POST',
            headers: { ...stranger.auth, 'X-Workspace-ID': stranger.workspaceId },
          })
        ).status,
      ).to.equal(404);
    });
  });
});
