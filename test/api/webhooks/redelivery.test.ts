import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { WebhookDelivery } from '../../../db/models/webhook-delivery';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, withJson } from '../../support/accounts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Redelivering an endpoint's failed deliveries as one job (beyond the contract). */
describe('Webhook redelivery jobs', function () {
  this.timeout(90_000);
  let api: RunningApi;
  let receiver: WebhookReceiver;
  let up = false;
  let delayMs = 0;

  before(async () => {
    api = await startApi({ workers: ['webhooks'] });
    receiver = await startWebhookReceiver(() => ({ status: up ? 200 : 500, delayMs }));
  });
  after(async () => {
    await api.close();
    await receiver.close();
  });
  beforeEach(() => {
    up = false;
    delayMs = 0;
  });

  /** A workspace with one endpoint and `count` failed deliveries (pings to a failing target). */
  async function failedDeliveries(count: number) {
    const owner = await activeOwner(api);
    const headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
    const endpoint = await (await api.request('/api/v1/webhooks', withJson('POST', { url: `${receiver.url}/${newId()}` }, headers))).json();
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const ping = await (await api.request(`/api/v1/webhooks/${endpoint.id}/test`, { method: 'POST', headers })).json();
      expect(ping.status).to.equal('failed');
      ids.push(ping.id);
    }
    return { headers, endpoint, ids };
  }

  const untilFinished = async (headers: Record<string, string>, jobId: string) => {
    for (let i = 0; i < 300; i++) {
      const job = await (await api.request(`/api/v1/webhooks/redeliveries/${jobId}`, { headers })).json();
      if (job.status !== 'running') return job;
      await sleep(100);
    }
    throw new Error(`redelivery ${jobId} never finished`);
  };

  it('retries every failed delivery since the given time once, and reports its progress', async () => {
    const { headers, endpoint, ids } = await failedDeliveries(4);
    const cutoff = new Date();
    await sleep(20);
    const newer = await failedDeliveries(0).then(
      async () => (await (await api.request(`/api/v1/webhooks/${endpoint.id}/test`, { method: 'POST', headers })).json()).id as string,
    );
    // The older failures are before the cutoff: only the newer one qualifies.
    await WebhookDelivery.updateMany({ _id: { $in: ids } }, { $set: { created_at: new Date(cutoff.getTime() - 60_000) } });
    up = true;

    const res = await api.request(`/api/v1/webhooks/${endpoint.id}/redeliver`, withJson('POST', { since: cutoff.toISOString() }, headers));
    expect(res.status).to.equal(202);
    const started = await res.json();
    expect(started).to.include({ endpoint_id: endpoint.id, status: 'running', attempted: 0 });
    expect(started.id).to.match(/^whr_[0-9a-f]{32}$/);

    const done = await untilFinished(headers, started.id);
    expect(done).to.include({ status: 'completed', total: 1, attempted: 1, delivered: 1, failed: 0, skipped: 0 });
    expect(done.finished_at).to.be.a('string');
    const delivered = await (await api.request(`/api/v1/webhooks/deliveries/${newer}`, { headers })).json();
    expect(delivered).to.include({ status: 'delivered', attempt_count: 2 });
    expect(delivered.attempts.map((a: { trigger: string }) => a.trigger)).to.deep.equal(['test', 'manual']);
    for (const id of ids) expect((await WebhookDelivery.findById(id).lean())?.status).to.equal('failed');

    // Everything since long ago: the four older ones now.
    const all = await (await api.request(`/api/v1/webhooks/${endpoint.id}/redeliver`, withJson('POST', { since: '2020-01-01T00:00:00Z' }, headers))).json();
    expect(await untilFinished(headers, all.id)).to.include({ status: 'completed', total: 4, attempted: 4, delivered: 4 });
  });

  it('can be canceled: no new attempt starts after the cancellation', async () => {
    const { headers, endpoint } = await failedDeliveries(25);
    up = true;
    delayMs = 1_500; // ten at a time: the 25 need at least three rounds
    const job = await (await api.request(`/api/v1/webhooks/${endpoint.id}/redeliver`, withJson('POST', { since: '2020-01-01T00:00:00Z' }, headers))).json();
    const before = receiver.received.length;
    await receiver.waitForRequests(before + 1);
    const res = await api.request(`/api/v1/webhooks/redeliveries/${job.id}/cancel`, { method: 'POST', headers });
    expect(res.status).to.equal(202);
    const canceled = await untilFinished(headers, job.id);
    expect(canceled.status).to.equal('canceled');
    expect(canceled.total).to.equal(25);
    expect(canceled.attempted).to.be.below(25);
    await sleep(2_000);
    expect(receiver.received.length - before).to.be.at.most(10); // the first round, already in flight
  });

  it('answers 404 for another workspace and 422 without a valid since', async () => {
    const { headers, endpoint } = await failedDeliveries(0);
    const job = await (await api.request(`/api/v1/webhooks/${endpoint.id}/redeliver`, withJson('POST', { since: new Date().toISOString() }, headers))).json();
    const stranger = await activeOwner(api);
    const theirs = { ...stranger.auth, 'X-Workspace-ID': stranger.workspaceId };
    expect((await api.request(`/api/v1/webhooks/redeliveries/${job.id}`, { headers: theirs })).status).to.equal(404);
    expect((await api.request(`/api/v1/webhooks/${endpoint.id}/redeliver`, withJson('POST', { since: new Date().toISOString() }, theirs))).status).to.equal(
      404,
    );
    for (const body of [{}, { since: 'yesterday' }]) {
      expect((await api.request(`/api/v1/webhooks/${endpoint.id}/redeliver`, withJson('POST', body, headers))).status).to.equal(422);
    }
  });
});
