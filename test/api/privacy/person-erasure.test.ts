import { expect } from 'chai';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { createActivities, systemClock } from '../../../activities';
import { TASK_QUEUES } from '../../../contracts/task-queues';
import { ERASURE_PAGE_SIZE } from '../../../contracts/privacy';
import { personErasureWorkflowId } from '../../../contracts/privacy';
import { newId } from '../../../db/ids';
import { BatchContact, batchContactId } from '../../../db/models/batch-contact';
import { Call, type CallStatus } from '../../../db/models/call';
import { CallEvent } from '../../../db/models/call-event';
import { PrivacyErasure } from '../../../db/models/privacy-erasure';
import { WebhookDelivery } from '../../../db/models/webhook-delivery';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { createLocal, workflowBundle } from '../../support/servers';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';
import { until } from '../../support/until';

const PHONE = '+919812300001';
const EMAIL = 'ravi.kumar@example.com';
const OTHER = '+919812300002';

/**
 * `POST /privacy/erasures` over HTTP, run by a real ops worker on the dev server whose page
 * activity fails once half-way (a worker lost during the erasure): the workflow resumes at that
 * page and finishes; everything about the person is erased, nothing about anyone else.
 */
describe('Erasure by person (POST /privacy/erasures)', function () {
  this.timeout(120_000);
  let api: RunningApi;
  let receiver: WebhookReceiver;
  let owner: SignedUp;
  let headers: Record<string, string>;
  let worker: Worker;
  let running: Promise<void>;
  let pageCalls = 0;
  let failures = 0;

  before(async () => {
    const env = createLocal();
    api = await startApi({ workers: ['webhooks'] });
    receiver = await startWebhookReceiver();
    owner = await activeOwner(api);
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
    expect(
      (await api.request('/api/v1/webhooks', withJson('POST', { url: `${receiver.url}/hooks`, events: ['privacy.erasure.completed'] }, headers))).status,
    ).to.equal(201);
    const real = createActivities({ clock: systemClock, temporal: env.client, webhooksAllowPrivateNetworks: true });
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: TASK_QUEUES.ops,
      workflowBundle: await workflowBundle(),
      activities: {
        ...real,
        // The second page's first attempt fails, as a worker lost during it would: the retry must carry on.
        async erasePersonPage(input: Parameters<typeof real.erasePersonPage>[0]) {
          pageCalls++;
          if (pageCalls === 2 && failures === 0) {
            failures++;
            throw ApplicationFailure.retryable('worker lost during the page');
          }
          return real.erasePersonPage(input);
        },
      },
    });
    running = worker.run();
  });
  after(async () => {
    worker.shutdown();
    await running;
    await api.close();
    await receiver.close();
  });

  const seedCall = async (fields: { to: string; status?: CallStatus; userData?: Record<string, unknown> }) => {
    const id = newId();
    const at = new Date();
    await Call.create({
      _id: id,
      workspace_id: owner.workspaceId,
      direction: 'outbound',
      to_number: fields.to,
      from_number: '+918000000001',
      status: fields.status ?? 'completed',
      user_data: fields.userData ?? {},
      transcript: [{ role: 'user', text: 'my name is Ravi', at }],
      summary: 'Ravi wants a refund',
      duration_seconds: 30,
      cost_paise: 200,
      created_at: at,
      updated_at: at,
    });
    await CallEvent.create({
      _id: `evt_${id}`,
      workspace_id: owner.workspaceId,
      call_id: id,
      sequence: 0,
      type: 'user.turn',
      message: 'my name is Ravi',
      level: 'info',
      created_at: at,
    });
    return id;
  };

  it('erases every call and batch contact about the person across pages, resuming after a failed page; others untouched; 202 with progress; privacy.erasure.completed', async () => {
    // More than a page of calls, so the erasure spans pages: the person's calls early and late.
    const theirs = [await seedCall({ to: PHONE }), await seedCall({ to: OTHER, userData: { email: 'Ravi.Kumar@example.com' } })];
    const others = await Call.insertMany(
      Array.from({ length: ERASURE_PAGE_SIZE + 10 }, () => {
        const at = new Date();
        return {
          _id: newId(),
          workspace_id: owner.workspaceId,
          direction: 'outbound',
          to_number: OTHER,
          status: 'completed',
          summary: 'someone else',
          created_at: at,
          updated_at: at,
        };
      }),
    );
    theirs.push(await seedCall({ to: PHONE }));
    const batchId = newId();
    await BatchContact.create({
      _id: batchContactId(batchId, 0),
      batch_id: batchId,
      workspace_id: owner.workspaceId,
      index: 0,
      row: 2,
      number: PHONE,
      user_data: { name: 'Ravi' },
      status: 'completed',
      updated_at: new Date(),
    });
    await BatchContact.create({
      _id: batchContactId(batchId, 1),
      batch_id: batchId,
      workspace_id: owner.workspaceId,
      index: 1,
      row: 3,
      number: OTHER,
      user_data: { name: 'Sita' },
      status: 'completed',
      updated_at: new Date(),
    });

    const res = await api.request('/api/v1/privacy/erasures', withJson('POST', { phone: PHONE, email: EMAIL }, headers));
    expect(res.status, await res.clone().text()).to.equal(202);
    const started = await res.json();
    expect(started).to.include({ phone: '+91******0001', email_given: true });
    expect(started.id).to.match(/^[0-9a-f]{32}$/);

    // The same request while it runs: the same erasure, nothing started twice.
    const again = await api.request('/api/v1/privacy/erasures', withJson('POST', { phone: PHONE, email: EMAIL.toUpperCase() }, headers));
    expect(again.status).to.equal(202);
    expect((await again.json()).id).to.equal(started.id);

    const done = await until(
      async () => {
        const body = await (await api.request(`/api/v1/privacy/erasures/${started.id}`, { headers })).json();
        return body;
      },
      (body) => body.status === 'completed',
      60_000,
    );
    expect(failures).to.equal(1);
    expect(done.erased).to.deep.include({ calls: 3, batch_contacts: 1, events: 3 });
    expect(done.completed_at).to.be.a('string');

    for (const id of theirs) {
      const call = await (await api.request(`/api/v1/calls/${id}`, { headers })).json();
      expect(call.erased_at).to.be.a('string');
      expect(JSON.stringify(call)).not.to.match(/Ravi|9812300001|example\.com/i);
      const events = await (await api.request(`/api/v1/calls/${id}/events`, { headers })).json();
      expect(JSON.stringify(events)).not.to.include('Ravi');
    }
    expect(await Call.countDocuments({ _id: { $in: others.map((c) => c._id) }, erased_at: null, summary: 'someone else' })).to.equal(others.length);
    const contacts = await BatchContact.find({ batch_id: batchId }).sort({ index: 1 }).lean();
    expect(contacts.map((c) => [c.number, c.user_data])).to.deep.equal([
      ['', {}],
      [OTHER, { name: 'Sita' }],
    ]);

    // The person's details are gone from the erasure's own record; the event names only the masked number.
    const record = await PrivacyErasure.findById(started.id).lean();
    expect(record?.subject_sealed).to.equal(null);
    const [completed] = await receiver.waitForRequests(1, 30_000);
    const event = JSON.parse(completed.rawBody);
    expect(event).to.deep.include({ type: 'privacy.erasure.completed' });
    expect(event.data).to.deep.include({ erasure_id: started.id, phone: '+91******0001' });
    expect(completed.rawBody).not.to.include(PHONE);
    const delivery = await WebhookDelivery.findOne({ event_type: 'privacy.erasure.completed', workspace_id: owner.workspaceId }).lean();
    expect(delivery?.request_body).not.to.include(PHONE);

    // The workflow's history names the number only encrypted.
    const history = await createLocal().client.workflow.getHandle(personErasureWorkflowId(started.id)).fetchHistory();
    const [input] = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
    expect(Buffer.from(input?.metadata?.encoding ?? []).toString()).to.equal('binary/encrypted');
    expect(Buffer.from(input?.data ?? []).toString('latin1')).not.to.include('9812300001');

    // Asked again after it completed: a new erasure that finds nothing left.
    const third = await api.request('/api/v1/privacy/erasures', withJson('POST', { phone: PHONE }, headers));
    expect(third.status).to.equal(202);
    const thirdId = (await third.json()).id;
    expect(thirdId).not.to.equal(started.id);
    const thirdDone = await until(
      async () => {
        const body = await (await api.request(`/api/v1/privacy/erasures/${thirdId}`, { headers })).json();
        return body;
      },
      (body) => body.status === 'completed',
      60_000,
    );
    expect(thirdDone.erased).to.deep.include({ calls: 0, batch_contacts: 0 });
  });

  it('is for owners and admins: a developer gets 403, and nothing starts', async () => {
    const developer = await memberWithRole(api, owner.workspaceId, 'developer');
    const res = await api.request('/api/v1/privacy/erasures', withJson('POST', { phone: OTHER }, developer.headers));
    expect(res.status).to.equal(403);
    expect((await res.json()).detail).to.include('calls.erase');
    expect(await PrivacyErasure.countDocuments({ workspace_id: owner.workspaceId, phone_masked: '+91******0002' })).to.equal(0);
  });

  it('refuses a number that is not E.164 with 422 naming the field', async () => {
    const res = await api.request('/api/v1/privacy/erasures', withJson('POST', { phone: '98123' }, headers));
    expect(res.status).to.equal(422);
    expect(JSON.stringify((await res.json()).detail)).to.include('phone');
  });
});
