import { expect } from 'chai';
import { Workspace } from '../../../db/models/workspace';
import { workflowIds } from '../../../contracts/ids';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { currentDetails, describedMetadata, listedWorkflowIds } from '../../support/temporal-cli';
import { until } from '../../support/until';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';
import { createdBatch } from '../batches/helpers';
import { agentsClient } from '../agents/helpers';

const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };

/**
 * What ops see of calls in the Temporal UI, read with the Temporal CLI on the dev server (list
 * queries, describe, the metadata query): the `CallStatus` search attribute follows the call
 * (queued, ringing, in-progress, then how it ended), and every workflow a call touches (the
 * call, its slot keeper, its analytics, its webhook deliveries) and a batch carry a summary and
 * current details. Real API, workers, media service, simulators, FerretDB and Temporal.
 */
describe('Calls in the Temporal UI: CallStatus, summaries and current details', function () {
  this.timeout(180_000);
  let providers: TestProviders;
  let api: RunningApi;
  let receiver: WebhookReceiver;

  /** Waits until the CLI's list query finds exactly the workflows `expected` among those of the workspace. */
  const listedUntil = (query: string, expected: string[]) =>
    until(
      () => listedWorkflowIds(query),
      (ids) => expected.every((id) => ids.includes(id)),
      20_000,
      250,
    );
  const detailsUntil = (workflowId: string, pattern: RegExp) =>
    until(
      () => currentDetails(workflowId),
      (details) => pattern.test(details),
      20_000,
      250,
    );
  const callOf = async (owner: SignedUp, id: string) => (await api.request(`/api/v1/calls/${id}`, { headers: owner.auth })).json();
  const place = async (owner: SignedUp, agentId: string, to: string) => {
    const res = await api.request(
      '/api/v1/calls',
      withJson('POST', { agent_id: agentId, to_number: to, from_number: await providers.callerFor(owner.workspaceId) }, owner.auth),
    );
    expect(res.status, await res.clone().text()).to.equal(201);
    return (await res.json()) as { id: string; from_number: string };
  };

  before(async () => {
    // The simulated provider runs 20 times faster: a callee answering after 60 s rings for 3 s.
    providers = await startTestProviders({ timeScale: 0.05 });
    receiver = await startWebhookReceiver();
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
  });
  after(async () => {
    await api?.close();
    await providers?.close();
    await receiver?.close();
  });

  it('a call reads like a story: ringing, in-progress, completed (CallStatus), with its summary, its details and those of its keeper, analytics and deliveries', async () => {
    const owner = await activeOwner(api, { name: 'Asha Rao' });
    const agent = await agentsClient(api, owner.auth).created({
      name: 'Support',
      welcome_message: 'Hello, this is Support.',
      call: OPEN_HOURS,
      webhook_url: `${receiver.url}/hooks`,
    });
    const [to] = randomNumbers(1).map((n) => n.replace('+9180', '+9198'));
    providers.telephony.setCallee(to!, { kind: 'answer', answerAfterSeconds: 60 });
    const placed = await place(owner, agent.id, to!);
    const workflowId = workflowIds.call(placed.id);
    const ofWorkspace = (status: string) => `CallStatus="${status}" AND WorkspaceId="${owner.workspaceId}"`;

    expect(await describedMetadata(workflowId)).to.deep.include({ summary: `outbound call to ${to} from ${placed.from_number} with Support` });
    expect(await listedUntil(ofWorkspace('ringing'), [workflowId]), 'CallStatus="ringing" while the callee rings').to.include(workflowId);
    expect(await detailsUntil(workflowId, /^ringing/)).to.equal(`ringing ${to}`);

    expect(await listedUntil(ofWorkspace('in-progress'), [workflowId]), 'CallStatus="in-progress" once answered').to.include(workflowId);
    expect(await detailsUntil(workflowId, /^live/)).to.match(/^live since \d\d:\d\d:\d\d UTC with Support, for at most \d\d:\d\d$/);
    expect(await listedWorkflowIds(ofWorkspace('ringing'))).not.to.include(workflowId);

    // Live a moment (the agent speaks its welcome), then hung up through the API.
    await until(
      () => callOf(owner, placed.id),
      (call) => call.status === 'in-progress',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await api.request(`/api/v1/calls/${placed.id}/hangup`, { method: 'POST', headers: owner.auth })).status).to.equal(200);
    const events = await until(
      () => api.request(`/api/v1/calls/${placed.id}/events`, { headers: owner.auth }).then((r) => r.json()),
      (list: { type: string }[]) => list.some((e) => e.type === 'call.completed'),
      60_000,
    );
    expect(events.map((e: { type: string }) => e.type)).to.include('call.completed');
    const call = await callOf(owner, placed.id);
    expect(call).to.include({ status: 'completed', hangup_reason: 'hung up through the API' });

    // The check: after the call, `CallStatus="completed"` finds it.
    expect(await listedUntil(ofWorkspace('completed'), [workflowId])).to.include(workflowId);
    expect(await listedWorkflowIds(ofWorkspace('in-progress'))).not.to.include(workflowId);
    expect(await listedWorkflowIds(ofWorkspace('queued'))).not.to.include(workflowId);
    expect(await detailsUntil(workflowId, /^completed/)).to.match(
      new RegExp(`^completed: live \\d\\d:\\d\\d, charged ${call.cost_paise} paise \\(ended by Asha Rao: hung up through the API\\)$`),
    );

    const analyticsId = workflowIds.analytics(placed.id);
    expect(await listedUntil(`Kind="analytics" AND WorkspaceId="${owner.workspaceId}"`, [analyticsId])).to.deep.equal([analyticsId]);
    expect((await describedMetadata(analyticsId)).summary).to.equal(`post-call analytics of call ${placed.id}`);
    expect(await currentDetails(analyticsId)).to.match(/^call\.completed sent/);

    const keeperId = workflowIds.slots(owner.workspaceId);
    expect((await describedMetadata(keeperId)).summary).to.equal(`concurrency slots of workspace ${owner.workspaceId}`);
    expect(await detailsUntil(keeperId, / 0 active/)).to.match(new RegExp(`^workspace ${owner.workspaceId}, limit \\d+: 0 active, 0 queued$`));

    const deliveries = await until(
      () => listedWorkflowIds(`Kind="webhook_delivery" AND WorkspaceId="${owner.workspaceId}"`),
      (ids) => ids.length >= events.length,
      20_000,
      250,
    );
    const summaries = await Promise.all(deliveries.map(async (id) => (await describedMetadata(id)).summary));
    expect(summaries).to.include(`call.ended of call ${placed.id} to ${receiver.url}/hooks`);
    const ended = deliveries[summaries.indexOf(`call.ended of call ${placed.id} to ${receiver.url}/hooks`)]!;
    expect(await detailsUntil(ended, /^delivered/)).to.equal('delivered after 1 attempt(s)');
  });

  it('queued calls show their place in line and the keeper names them; a call hung up while queued is CallStatus="canceled"', async () => {
    const owner = await activeOwner(api, { name: 'Noor Khan' });
    // No slot at all, so that the calls stay in the keeper's queue (the keeper reads the limit when it starts).
    await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { concurrency_limit: 0 } });
    const agent = await agentsClient(api, owner.auth).created({ name: 'Sales', call: OPEN_HOURS });
    const [firstTo, secondTo] = randomNumbers(2);
    const first = await place(owner, agent.id, firstTo!);
    const second = await place(owner, agent.id, secondTo!);
    const [firstId, secondId] = [workflowIds.call(first.id), workflowIds.call(second.id)];

    expect(await listedUntil(`CallStatus="queued" AND WorkspaceId="${owner.workspaceId}"`, [firstId, secondId])).to.include.members([firstId, secondId]);
    expect((await describedMetadata(secondId)).summary).to.equal(`outbound call to ${secondTo} from ${second.from_number} with Sales`);
    expect(await detailsUntil(firstId, /^queued/)).to.equal('queued at position 1, waiting for a free slot');
    expect(await detailsUntil(secondId, /^queued/)).to.equal('queued at position 2, waiting for a free slot');
    const keeperId = workflowIds.slots(owner.workspaceId);
    expect(await detailsUntil(keeperId, /2 queued/)).to.equal(
      `workspace ${owner.workspaceId}, limit 0: 0 active, 2 queued; next in line: ${first.id}, ${second.id}`,
    );

    expect((await api.request(`/api/v1/calls/${first.id}/hangup`, { method: 'POST', headers: owner.auth })).status).to.equal(200);
    expect(await listedUntil(`CallStatus="canceled" AND WorkspaceId="${owner.workspaceId}"`, [firstId])).to.deep.equal([firstId]);
    expect(await detailsUntil(firstId, /^canceled/)).to.equal('canceled: canceled while queued');
    expect(await detailsUntil(keeperId, /1 queued/)).to.equal(`workspace ${owner.workspaceId}, limit 0: 0 active, 1 queued; next in line: ${second.id}`);
    expect((await api.request(`/api/v1/calls/${second.id}/hangup`, { method: 'POST', headers: owner.auth })).status).to.equal(200);
  });

  it('a batch is titled with its name, size, agent and caller number, and its details say what it waits for', async () => {
    const owner = await activeOwner(api, { name: 'Ravi Iyer' });
    const agent = await agentsClient(api, owner.auth).created({ name: 'Collector', call: OPEN_HOURS });
    const from = await providers.callerFor(owner.workspaceId);
    const startAt = new Date(Date.now() + 24 * 3600_000).toISOString();
    const { batch } = await createdBatch(api, owner.auth, 'number,name\n+919700000001,Ann\n+919700000002,Ben\n', {
      agent_id: agent.id,
      from_number: from,
      name: 'Renewals',
      start_at: startAt,
    });
    const workflowId = workflowIds.batch(batch.id);
    expect((await describedMetadata(workflowId)).summary).to.equal(`batch "Renewals" of 2 contacts with Collector, from ${from}`);
    expect(await detailsUntil(workflowId, /^scheduled/)).to.equal(
      `scheduled to start at ${startAt}: pending 2, calling 0, retry-wait 0, completed 0, no-answer 0, busy 0, failed 0, canceled 0`,
    );
  });
});
