import { expect } from 'chai';
import { WorkflowNotFoundError } from '@temporalio/client';
import { AuditEvent } from '../../../db/models/audit-event';
import { WebhookDefaultSecret } from '../../../db/models/webhook-default-secret';
import { WebhookDelivery, type DeliveryStatus } from '../../../db/models/webhook-delivery';
import { WebhookEndpoint } from '../../../db/models/webhook-endpoint';
import { openSecret } from '../../../contracts/secret-box';
import { EVENT_TYPES } from '../../../domain/webhooks/event-types';
import { newDeliveryId } from '../../../domain/webhooks/ids';
import { secretHint } from '../../../domain/webhooks/signing';
import { startApi, type ApiResponse, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, withJson } from '../../support/accounts';
import { createLocal } from '../../support/servers';

type Headers = Record<string, string>;

const ENDPOINT_FIELDS = ['active', 'created_at', 'created_by', 'description', 'events', 'id', 'secret_hint', 'updated_at', 'url'];
const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/;
const HINT = /^whsec_[A-Za-z0-9_-]{4}\.\.\.[A-Za-z0-9_-]{4}$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The webhook endpoint management of the contract's Webhooks table: GET /webhooks/events,
 * GET and POST /webhooks, PATCH and DELETE /webhooks/{endpoint_id}, its rotate-secret, and
 * the default secret. Real API over HTTP, real database, real Temporal.
 */
describe('webhook endpoints: create, list, change, delete, rotate', () => {
  let api: RunningApi;
  let headers: Headers;
  let workspaceId: string;

  before(async () => {
    api = await startApi();
    const owner = await activeOwner(api, { name: 'Asha Rao' });
    workspaceId = owner.workspaceId;
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
  });
  after(() => api.close());

  /** Another active workspace, for tests that count endpoints or must not see each other. */
  async function freshWorkspace(): Promise<{ headers: Headers; workspaceId: string }> {
    const owner = await activeOwner(api, { name: 'Ravi Iyer' });
    return { headers: { ...owner.auth, 'X-Workspace-ID': owner.workspaceId }, workspaceId: owner.workspaceId };
  }

  const create = (body: unknown, h = headers) => api.request('/api/v1/webhooks', withJson('POST', body, h));
  const created = async (body: Record<string, unknown> = {}, h = headers) => {
    const res = await create({ url: 'https://example.com/hooks', ...body }, h);
    expect(res.status, await res.clone().text()).to.equal(201);
    return res.json();
  };
  const list = async (h = headers) => {
    const res = await api.request('/api/v1/webhooks', { headers: h });
    expect(res.status).to.equal(200);
    return res.json();
  };
  const patch = (id: string, body: unknown, h = headers) => api.request(`/api/v1/webhooks/${id}`, withJson('PATCH', body, h));
  const remove = (id: string, h = headers) => api.request(`/api/v1/webhooks/${id}`, { method: 'DELETE', headers: h });
  const rotate = (id: string, h = headers) => api.request(`/api/v1/webhooks/${id}/rotate-secret`, { method: 'POST', headers: h });

  async function expectIssue(res: ApiResponse, type: string, loc: (string | number)[]) {
    const text = await res.clone().text();
    expect(res.status, text).to.equal(422);
    const { detail } = await res.json();
    expect(detail, text).to.have.lengthOf(1);
    expect(detail[0], text).to.include({ type });
    expect(detail[0].loc, text).to.deep.equal(loc);
    return detail[0];
  }

  describe('GET /webhooks/events', () => {
    it('lists every subscribable event type with its description and data fields, without ping', async () => {
      const res = await api.request('/api/v1/webhooks/events', { headers });
      expect(res.status).to.equal(200);
      const types = await res.json();
      expect(types).to.deep.equal(EVENT_TYPES.map((e) => ({ type: e.type, description: e.description, data_fields: [...e.data_fields] })));
      // The contract's 17, then issue 20's four (transfer and voicemail) and issue 31's call.opted_out and privacy.erasure.completed.
      expect(types).to.have.lengthOf(23);
      expect(types.map((t: { type: string }) => t.type)).to.include.members([
        'call.transfer_started',
        'call.transferred',
        'call.transfer_failed',
        'call.voicemail',
        'call.opted_out',
        'privacy.erasure.completed',
      ]);
      expect(types.map((t: { type: string }) => t.type))
        .to.include('call.completed')
        .and.not.to.include('ping');
      expect(types.find((t: { type: string }) => t.type === 'call.started').data_fields).to.deep.equal([
        'channel',
        'from',
        'to',
        'stt',
        'llm',
        'tts',
        'started_by',
        'values',
      ]);
    });
  });

  describe('POST /webhooks', () => {
    it('creates an endpoint with the defaults: 201 with the secret once', async () => {
      const res = await create({ url: 'https://example.com/voice-events' });
      expect(res.status).to.equal(201);
      const body = await res.json();
      expect(Object.keys(body).sort()).to.deep.equal([...ENDPOINT_FIELDS, 'secret'].sort());
      expect(body).to.include({ url: 'https://example.com/voice-events', description: '', active: true, created_by: 'Asha Rao' });
      expect(body.events).to.deep.equal(['*']);
      expect(body.id).to.match(/^we_[0-9a-f]{32}$/);
      expect(body.secret).to.match(SECRET);
      expect(body.secret_hint).to.equal(secretHint(body.secret)).and.match(HINT);
      expect(body.created_at).to.match(/\+05:30$/);
      expect(body.updated_at).to.equal(body.created_at);

      const stored = await WebhookEndpoint.findById(body.id).lean();
      expect(stored).to.include({ workspace_id: workspaceId, active: true });
      expect(stored!.secret).not.to.include(body.secret);
      expect(openSecret(stored!.secret)).to.equal(body.secret);
    });

    it('takes description, events and active as sent', async () => {
      const body = await created({ url: 'https://example.com/a', description: 'CRM sync', events: ['call.completed', 'call.ended'], active: false });
      expect(body).to.include({ description: 'CRM sync', active: false });
      expect(body.events).to.deep.equal(['call.completed', 'call.ended']);
    });

    it('takes a URL of 500 characters and refuses one of 501', async () => {
      const url500 = 'https://example.com/' + 'a'.repeat(480);
      expect(url500).to.have.lengthOf(500);
      expect((await created({ url: url500 })).url).to.equal(url500);
      const issue = await expectIssue(await create({ url: url500 + 'a' }), 'string_too_long', ['body', 'url']);
      expect(issue.input).to.equal(url500 + 'a');
    });

    it('takes a description of 200 characters and refuses one of 201', async () => {
      expect((await created({ description: 'd'.repeat(200) })).description).to.have.lengthOf(200);
      await expectIssue(await create({ url: 'https://example.com', description: 'd'.repeat(201) }), 'string_too_long', ['body', 'description']);
    });

    it('takes plain http for localhost and 127.0.0.1', async () => {
      expect((await created({ url: 'http://localhost:3000/hooks' })).url).to.equal('http://localhost:3000/hooks');
      expect((await created({ url: 'http://127.0.0.1/hooks' })).url).to.equal('http://127.0.0.1/hooks');
    });

    it('refuses plain http elsewhere, other schemes, credentials and non-URLs with 422 at body.url', async () => {
      const refused: [string, RegExp][] = [
        ['http://example.com/hooks', /plain http is allowed only for localhost and 127\.0\.0\.1/],
        ['ftp://example.com/hooks', /must use https \(it uses ftp\)/],
        ['https://user:pass@example.com/hooks', /must not contain credentials/],
        ['example.com/hooks', /must be an absolute URL/],
        ['https://example.com/a b', /spaces/],
      ];
      for (const [url, msg] of refused) {
        const issue = await expectIssue(await create({ url }), 'value_error', ['body', 'url']);
        expect(issue.msg, url).to.match(msg);
        expect(issue.input).to.equal(url);
      }
      await expectIssue(await create({ url: '' }), 'string_too_short', ['body', 'url']);
      await expectIssue(await create({ description: 'no url' }), 'missing', ['body', 'url']);
    });

    it('refuses an unknown event type, naming it at its position, and ping', async () => {
      const issue = await expectIssue(await create({ url: 'https://example.com', events: ['call.started', 'call.exploded'] }), 'enum', ['body', 'events', 1]);
      expect(issue.msg).to.include('"call.exploded"');
      expect(issue.input).to.equal('call.exploded');
      await expectIssue(await create({ url: 'https://example.com', events: ['ping'] }), 'enum', ['body', 'events', 0]);
    });

    it('refuses an empty events list', async () => {
      await expectIssue(await create({ url: 'https://example.com', events: [] }), 'too_short', ['body', 'events']);
    });

    it('normalises events: * alone wins, duplicates go, the rest is sorted', async () => {
      expect((await created({ events: ['call.started', '*', 'agent.reply'] })).events).to.deep.equal(['*']);
      expect((await created({ events: ['tool.result', 'call.started', 'tool.result', 'agent.reply'] })).events).to.deep.equal([
        'agent.reply',
        'call.started',
        'tool.result',
      ]);
    });

    it('does not let the caller choose the secret or other read-only fields', async () => {
      await expectIssue(await create({ url: 'https://example.com', secret: 'whsec_mine' }), 'extra_forbidden', ['body', 'secret']);
    });

    it('credits an endpoint made with an API key to key:<name>', async () => {
      const key = await apiKeyFor(workspaceId, 'deploy bot');
      const body = await created({}, key.headers);
      expect(body.created_by).to.equal('key:deploy bot');
      const listed = (await list()).find((e: { id: string }) => e.id === body.id);
      expect(listed.created_by).to.equal('key:deploy bot');
    });

    it('a viewer may not create endpoints: 403 naming keys.manage, nothing stored', async () => {
      const viewer = await memberWithRole(api, workspaceId, 'viewer');
      const before = await WebhookEndpoint.countDocuments({ workspace_id: workspaceId });
      const res = await create({ url: 'https://example.com/viewer' }, viewer.headers);
      expect(res.status).to.equal(403);
      expect((await res.json()).permission).to.equal('keys.manage');
      expect(await WebhookEndpoint.countDocuments({ workspace_id: workspaceId })).to.equal(before);
    });
  });

  describe('GET /webhooks', () => {
    it("lists the workspace's endpoints newest first, with the hint and never the secret", async () => {
      const { headers: h } = await freshWorkspace();
      const first = await created({ url: 'https://example.com/1' }, h);
      await sleep(5);
      const second = await created({ url: 'https://example.com/2', events: ['call.ended'] }, h);
      const endpoints = await list(h);
      expect(endpoints.map((e: { id: string }) => e.id)).to.deep.equal([second.id, first.id]);
      for (const e of endpoints) expect(Object.keys(e).sort()).to.deep.equal(ENDPOINT_FIELDS);
      expect(endpoints[0]).to.deep.equal((({ secret: _secret, ...rest }) => rest)(second));
      const text = JSON.stringify(endpoints);
      expect(text).not.to.include(first.secret).and.not.to.include(second.secret);
    });

    it('shows no endpoint of another workspace', async () => {
      const other = await freshWorkspace();
      const theirs = await created({}, other.headers);
      expect((await list()).map((e: { id: string }) => e.id)).not.to.include(theirs.id);
    });
  });

  describe('the limit of 20 endpoints per workspace', () => {
    it('answers 409 for the 21st; deleting one frees its place', async () => {
      const { headers: h, workspaceId: id } = await freshWorkspace();
      const endpoints = [];
      for (let i = 0; i < 20; i++) endpoints.push(await created({ url: `https://example.com/${i}` }, h));
      const res = await create({ url: 'https://example.com/21' }, h);
      expect(res.status).to.equal(409);
      expect((await res.json()).detail).to.equal('a workspace has at most 20 webhook endpoints; delete one before adding another');
      expect(await WebhookEndpoint.countDocuments({ workspace_id: id })).to.equal(20);

      expect((await remove(endpoints[7].id, h)).status).to.equal(204);
      const again = await created({ url: 'https://example.com/again' }, h);
      expect((await WebhookEndpoint.findById(again.id).lean())?.slot).to.equal(7);
      expect((await create({ url: 'https://example.com/22' }, h)).status).to.equal(409);
    });

    it('holds exactly under 25 parallel creates: 20 created, 5 refused', async () => {
      const { headers: h, workspaceId: id } = await freshWorkspace();
      const results = await Promise.all(Array.from({ length: 25 }, (_, i) => create({ url: `https://example.com/p${i}` }, h)));
      const statuses = results.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 201),
        statuses.join(','),
      ).to.have.lengthOf(20);
      expect(
        statuses.filter((s) => s === 409),
        statuses.join(','),
      ).to.have.lengthOf(5);
      const stored = await WebhookEndpoint.find({ workspace_id: id }, { slot: 1 }).lean();
      expect(stored.map((e) => e.slot).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
      expect(await list(h)).to.have.lengthOf(20);
    });
  });

  describe('PATCH /webhooks/{endpoint_id}', () => {
    it('changes only the fields sent, and answers the endpoint without its secret', async () => {
      const endpoint = await created({ url: 'https://example.com/before', description: 'before', events: ['call.ended'] });
      await sleep(5);
      const res = await patch(endpoint.id, { description: 'after' });
      expect(res.status).to.equal(200);
      const body = await res.json();
      expect(Object.keys(body).sort()).to.deep.equal(ENDPOINT_FIELDS);
      expect(body).to.include({
        id: endpoint.id,
        url: 'https://example.com/before',
        description: 'after',
        active: true,
        secret_hint: endpoint.secret_hint,
        created_at: endpoint.created_at,
      });
      expect(body.events).to.deep.equal(['call.ended']);
      expect(body.updated_at).not.to.equal(endpoint.updated_at);
      expect(JSON.stringify(body)).not.to.include(endpoint.secret);

      const next = await (await patch(endpoint.id, { url: 'http://localhost:9000/after', events: ['tool.call', '*'], active: false })).json();
      expect(next).to.include({ url: 'http://localhost:9000/after', description: 'after', active: false });
      expect(next.events).to.deep.equal(['*']);
      expect((await list()).find((e: { id: string }) => e.id === endpoint.id)).to.deep.equal(next);
      expect(openSecret((await WebhookEndpoint.findById(endpoint.id, { secret: 1 }).lean())!.secret)).to.equal(endpoint.secret);
    });

    it('answers an empty body with the endpoint unchanged', async () => {
      const endpoint = await created({ description: 'as is' });
      await sleep(5);
      const res = await patch(endpoint.id, {});
      expect(res.status).to.equal(200);
      expect(await res.json()).to.deep.equal((({ secret: _secret, ...rest }) => rest)(endpoint));
      expect(await AuditEvent.countDocuments({ workspace_id: workspaceId, action: 'webhook.updated', 'target.id': endpoint.id })).to.equal(0);
    });

    it('applies the create rules at their bounds, and a refused change changes nothing', async () => {
      const endpoint = await created({ url: 'https://example.com/rules' });
      await expectIssue(await patch(endpoint.id, { url: 'http://example.com/rules' }), 'value_error', ['body', 'url']);
      await expectIssue(await patch(endpoint.id, { url: 'https://example.com/' + 'a'.repeat(481) }), 'string_too_long', ['body', 'url']);
      await expectIssue(await patch(endpoint.id, { description: 'd'.repeat(201) }), 'string_too_long', ['body', 'description']);
      await expectIssue(await patch(endpoint.id, { events: [] }), 'too_short', ['body', 'events']);
      await expectIssue(await patch(endpoint.id, { events: ['call.started', 'nope'] }), 'enum', ['body', 'events', 1]);
      await expectIssue(await patch(endpoint.id, { description: null }), 'string_type', ['body', 'description']);
      await expectIssue(await patch(endpoint.id, { secret_hint: 'x' }), 'extra_forbidden', ['body', 'secret_hint']);
      const stored = await WebhookEndpoint.findById(endpoint.id).lean();
      expect(stored).to.include({ url: 'https://example.com/rules', description: '' });
      expect(stored?.updated_at.toISOString()).to.equal(new Date(endpoint.updated_at).toISOString());

      const longest = 'https://example.com/' + 'a'.repeat(480);
      expect((await (await patch(endpoint.id, { url: longest, description: 'd'.repeat(200) })).json()).url).to.equal(longest);
    });

    it('records the names of the fields that changed in the audit log', async () => {
      const endpoint = await created({ url: 'https://example.com/audited?token=abc', description: 'same' });
      await patch(endpoint.id, { description: 'same', active: false, events: ['call.ended'] });
      const [event] = await AuditEvent.find({ workspace_id: workspaceId, action: 'webhook.updated', 'target.id': endpoint.id }).lean();
      expect(event.details).to.deep.equal({ fields: ['events', 'active'] });
      expect(event.target).to.deep.equal({ type: 'webhook_endpoint', id: endpoint.id, name: 'https://example.com/audited' });
    });
  });

  describe('POST /webhooks/{endpoint_id}/rotate-secret', () => {
    it('answers a new secret once; the hint and the stored secret change, the list shows only the hint', async () => {
      const endpoint = await created();
      await sleep(5);
      const res = await rotate(endpoint.id);
      expect(res.status).to.equal(200);
      const body = await res.json();
      expect(Object.keys(body).sort()).to.deep.equal([...ENDPOINT_FIELDS, 'secret'].sort());
      expect(body.secret).to.match(SECRET).and.not.equal(endpoint.secret);
      expect(body.secret_hint).to.equal(secretHint(body.secret)).and.not.equal(endpoint.secret_hint);
      expect(body).to.include({ id: endpoint.id, url: endpoint.url, created_at: endpoint.created_at });
      expect(body.updated_at).not.to.equal(endpoint.updated_at);

      expect(openSecret((await WebhookEndpoint.findById(endpoint.id, { secret: 1 }).lean())!.secret)).to.equal(body.secret);
      const listed = (await list()).find((e: { id: string }) => e.id === endpoint.id);
      expect(listed.secret_hint).to.equal(body.secret_hint);
      expect(listed).not.to.have.property('secret');
    });
  });

  describe("another workspace's endpoint, unknown and malformed ids", () => {
    it("answers 404 for another workspace's endpoint and leaves it alone", async () => {
      const other = await freshWorkspace();
      const theirs = await created({ url: 'https://example.com/theirs', description: 'theirs' }, other.headers);
      for (const res of [await patch(theirs.id, { description: 'mine now' }), await rotate(theirs.id), await remove(theirs.id)]) {
        expect(res.status).to.equal(404);
        expect(await res.json()).to.deep.equal({ detail: 'webhook endpoint not found' });
      }
      const stored = await WebhookEndpoint.findById(theirs.id).lean();
      expect(stored).to.include({ description: 'theirs' });
      expect(openSecret(stored!.secret)).to.equal(theirs.secret);
    });

    it('answers 404 for an unknown id', async () => {
      const unknown = 'we_0123456789abcdef0123456789abcdef';
      for (const res of [await patch(unknown, { description: 'x' }), await rotate(unknown), await remove(unknown)]) expect(res.status).to.equal(404);
    });

    it('answers 422 at path.endpoint_id for an id that is not we_ and 32 hex characters', async () => {
      for (const id of ['not-an-id', '0123456789abcdef0123456789abcdef', 'we_0123456789ABCDEF0123456789ABCDEF']) {
        await expectIssue(await remove(id), 'string_pattern_mismatch', ['path', 'endpoint_id']);
        await expectIssue(await rotate(id), 'string_pattern_mismatch', ['path', 'endpoint_id']);
      }
    });
  });

  describe('DELETE /webhooks/{endpoint_id}', () => {
    const temporal = () => createLocal().client;

    async function delivery(endpointId: string, status: DeliveryStatus) {
      const id = newDeliveryId();
      const at = new Date();
      await WebhookDelivery.create({
        _id: id,
        workspace_id: workspaceId,
        target: 'endpoint',
        endpoint_id: endpointId,
        url: 'https://example.com/hooks',
        event_id: 'evt_0123456789abcdef0123456789abcdef',
        event_type: 'call.ended',
        request_body: '{}',
        status,
        next_attempt_at: status === 'retrying' ? new Date(at.getTime() + 60_000) : null,
        created_at: at,
        updated_at: at,
      });
      return id;
    }

    /** A workflow under the delivery's id that no worker runs, so it waits until canceled. */
    const startWaitingWorkflow = (deliveryId: string) =>
      temporal().workflow.start('webhookDeliveryStandIn', { workflowId: deliveryId, taskQueue: `nobody-${deliveryId}`, args: [] });

    it('answers 204; the endpoint is gone and a second delete is 404', async () => {
      const endpoint = await created();
      expect((await remove(endpoint.id)).status).to.equal(204);
      expect((await list()).map((e: { id: string }) => e.id)).not.to.include(endpoint.id);
      expect(await WebhookEndpoint.findById(endpoint.id).lean()).to.equal(null);
      expect((await remove(endpoint.id)).status).to.equal(404);
    });

    it('fails its pending and retrying deliveries and cancels their workflows; others stay as they are', async () => {
      const endpoint = await created();
      const kept = await created({ url: 'https://example.com/kept' });
      const pending = await delivery(endpoint.id, 'pending');
      const retrying = await delivery(endpoint.id, 'retrying');
      const pendingEnded = await delivery(endpoint.id, 'pending');
      const delivered = await delivery(endpoint.id, 'delivered');
      const failed = await delivery(endpoint.id, 'failed');
      const othersPending = await delivery(kept.id, 'pending');
      const waiting = await startWaitingWorkflow(pending);
      // The other open deliveries' workflows are gone (never started: not found) or ended
      // (Temporal accepts the cancel as a no-op); neither may fail the delete.
      const ended = await startWaitingWorkflow(pendingEnded);
      await ended.terminate('ended before the endpoint was deleted');
      const notFound = await temporal()
        .workflow.getHandle(retrying)
        .cancel()
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(notFound).to.be.instanceOf(WorkflowNotFoundError);

      expect((await remove(endpoint.id)).status).to.equal(204);

      for (const id of [pending, retrying, pendingEnded]) {
        expect(await WebhookDelivery.findById(id).lean(), id).to.include({ status: 'failed', failure_reason: 'endpoint deleted', next_attempt_at: null });
      }
      expect(await WebhookDelivery.findById(delivered).lean()).to.include({ status: 'delivered', failure_reason: null });
      expect(await WebhookDelivery.findById(failed).lean()).to.include({ status: 'failed', failure_reason: null });
      expect(await WebhookDelivery.findById(othersPending).lean()).to.include({ status: 'pending', target_deleted_at: null });

      const history = await waiting.fetchHistory();
      expect(history.events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes)).to.equal(true);
      await waiting.terminate('test cleanup');
    });
  });

  describe('the default secret', () => {
    it('shows only a hint, made on first use and the same on every read', async () => {
      const { headers: h, workspaceId: id } = await freshWorkspace();
      expect(await WebhookDefaultSecret.findById(id).lean()).to.equal(null);
      const res = await api.request('/api/v1/webhooks/default-secret', { headers: h });
      expect(res.status).to.equal(200);
      const body = await res.json();
      expect(Object.keys(body)).to.deep.equal(['secret_hint']);
      const stored = await WebhookDefaultSecret.findById(id).lean();
      expect(body.secret_hint)
        .to.equal(secretHint(openSecret(stored!.secret)))
        .and.match(HINT);
      expect(await (await api.request('/api/v1/webhooks/default-secret', { headers: h })).json()).to.deep.equal(body);
    });

    it('rotates: the new secret once, a new hint, and reads show the new hint', async () => {
      const { headers: h, workspaceId: id } = await freshWorkspace();
      const before = await (await api.request('/api/v1/webhooks/default-secret', { headers: h })).json();
      const res = await api.request('/api/v1/webhooks/default-secret/rotate', { method: 'POST', headers: h });
      expect(res.status).to.equal(200);
      const rotated = await res.json();
      expect(Object.keys(rotated).sort()).to.deep.equal(['secret', 'secret_hint']);
      expect(rotated.secret).to.match(SECRET);
      expect(rotated.secret_hint).to.equal(secretHint(rotated.secret)).and.not.equal(before.secret_hint);
      expect(openSecret((await WebhookDefaultSecret.findById(id).lean())!.secret)).to.equal(rotated.secret);
      expect(await (await api.request('/api/v1/webhooks/default-secret', { headers: h })).json()).to.deep.equal({ secret_hint: rotated.secret_hint });
    });
  });

  describe('the audit log', () => {
    it('records create, update, rotate, delete and the default secret rotation, never a secret', async () => {
      const { headers: h, workspaceId: id } = await freshWorkspace();
      const endpoint = await created({ url: 'https://example.com/audit' }, h);
      await patch(endpoint.id, { description: 'changed' }, h);
      const rotatedSecret = (await (await rotate(endpoint.id, h)).json()).secret;
      expect((await remove(endpoint.id, h)).status).to.equal(204);
      const defaultSecret = (await (await api.request('/api/v1/webhooks/default-secret/rotate', { method: 'POST', headers: h })).json()).secret;

      const events = await AuditEvent.find({ workspace_id: id, action: /^webhook\./ }).lean();
      const byAction = new Map(events.map((e) => [e.action, e]));
      expect(events).to.have.lengthOf(5);
      expect([...byAction.keys()].sort()).to.deep.equal([
        'webhook.created',
        'webhook.default_secret_rotated',
        'webhook.deleted',
        'webhook.secret_rotated',
        'webhook.updated',
      ]);
      for (const action of ['webhook.created', 'webhook.updated', 'webhook.secret_rotated', 'webhook.deleted']) {
        expect(byAction.get(action)?.target, action).to.deep.equal({ type: 'webhook_endpoint', id: endpoint.id, name: 'https://example.com/audit' });
      }
      expect(byAction.get('webhook.updated')?.details).to.deep.equal({ fields: ['description'] });
      expect(byAction.get('webhook.default_secret_rotated')?.target).to.include({ type: 'webhook_default_secret', id });
      for (const e of events) expect(e.actor).to.include({ type: 'user', name: 'Ravi Iyer' });
      const text = JSON.stringify(events);
      for (const secret of [endpoint.secret, rotatedSecret, defaultSecret]) expect(text).not.to.include(secret);
      expect(text).not.to.include('whsec_');
    });
  });
});
