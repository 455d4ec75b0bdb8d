import { expect } from 'chai';
import type { WorkflowHandle } from '@temporalio/client';
import { Batch } from '../../db/models/batch';
import { BatchContact, batchContactIdRange } from '../../db/models/batch-contact';
import { Call } from '../../db/models/call';
import { Workspace } from '../../db/models/workspace';
import { batchWorkflowId, batchStateQuery, type BatchState, type BatchWorkflowInput } from '../../contracts/batches';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { activeOwner } from '../support/accounts';
import { startApi, type RunningApi } from '../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../support/providers';
import { createLocal } from '../support/servers';
import { agentsClient } from '../api/agents/helpers';
import { createdBatch } from '../api/batches/helpers';
import { storyOfCall } from '../support/cluster-load';
import { workflowTaskTroubles } from '../support/workflow-history-story';
import { callWorkflowId } from '../../contracts/calls';

const CONTACTS = 500;
const LIMIT = 50;
/** Far below the default, so that 500 contacts take several runs. */
const HISTORY_LIMIT = 600;

/**
 * A batch of 500 contacts run to its end on the real servers (busy callees: quick calls
 * without conversations), its workflow continuing as new whenever its history passes the
 * limit: every contact is called exactly once and settled, whatever run it fell in.
 */
describe('batchWorkflow: 500 contacts, history bounded by continue-as-new', function () {
  this.timeout(600_000);
  let providers: TestProviders;
  let api: RunningApi;

  before(async () => {
    // The production default of PROVIDER_TIMEOUT_MS: this harness dials 50 calls at once, unpaced,
    // to a simulator in the test's own process, which on a busy 2-core machine took more than the
    // test default of 1 s to answer some (calls refused, `failed` instead of `busy`).
    providers = await startTestProviders({ timeScale: 0.05, timeoutMs: 5_000 });
    api = await startApi({ workers: ['calls'], providers: providers.config });
  });
  after(async () => {
    await api?.close();
    await providers?.close();
  });

  it('calls each of 500 contacts once through the limit of 50 and completes over several runs', async () => {
    const owner = await activeOwner(api);
    await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { concurrency_limit: LIMIT } });
    const agentId: string = (await agentsClient(api, owner.auth).created({ name: 'Bulk', call: { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' } }))
      .id;
    const numbers = randomNumbers(CONTACTS).map((n) => n.replace('+9180', '+9177'));
    for (const number of numbers) providers.telephony.setCallee(number, { kind: 'busy' });
    // Created through the API (waiting a day), then run now by a workflow with a low history limit.
    const csv = ['number,name', ...numbers.map((n, i) => `${n},P${i}`)].join('\n');
    const { batch } = await createdBatch(api, owner.auth, csv, {
      agent_id: agentId,
      from_number: await providers.callerFor(owner.workspaceId),
      start_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const client = createLocal().client;
    await client.workflow.getHandle(batchWorkflowId(batch.id)).terminate('restarted by the test with a low history limit');
    const input: BatchWorkflowInput = {
      batchId: batch.id,
      workspaceId: owner.workspaceId,
      agentId,
      contactsTotal: CONTACTS,
      startAt: null,
      retry: { maxAttempts: 1, spacingSeconds: 60 },
      historyLimit: HISTORY_LIMIT,
    };
    const handle = await client.workflow.start('batchWorkflow', { taskQueue: TASK_QUEUES.calls, workflowId: batchWorkflowId(batch.id), args: [input] });

    const running = await handle.query(batchStateQuery);
    expect(running.status).to.equal('running');
    const result = (await handle.result()) as BatchState;
    expect(result.status).to.equal('completed');
    // A call that did not end busy fails the test with its story (events, hang-up reason).
    const others = await Call.find({ workspace_id: owner.workspaceId, status: { $ne: 'busy' } }, { _id: 1 }).lean();
    const stories = await Promise.all(
      others.map(async (c) => [await storyOfCall(String(c._id), []), ...(await workflowTaskTroubles(client, callWorkflowId(String(c._id))))].join('\n')),
    );
    expect(result.counts, stories.join('\n')).to.deep.include({ busy: CONTACTS, pending: 0, calling: 0 });
    expect(result.runs).to.be.at.least(3);

    // Every run stayed near the limit: past it a run only lets its calls in flight (at most 50) end.
    let runId: string | null | undefined = handle.firstExecutionRunId;
    const lengths: number[] = [];
    while (runId) {
      const history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>> = await client.workflow.getHandle(batchWorkflowId(batch.id), runId).fetchHistory();
      const events = history.events ?? [];
      lengths.push(events.length);
      runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    }
    expect(lengths).to.have.length(result.runs);
    for (const length of lengths) expect(length).to.be.below(HISTORY_LIMIT + LIMIT * 12);

    const record = await Batch.findById(batch.id).lean();
    expect(record).to.deep.include({ status: 'completed' });
    expect(record!.counts).to.deep.include({ busy: CONTACTS, pending: 0, calling: 0 });
    const contacts = await BatchContact.find({ _id: batchContactIdRange(batch.id) })
      .sort({ _id: 1 })
      .lean();
    expect(contacts.map((c) => c.number)).to.deep.equal(numbers);
    expect(contacts.every((c) => c.status === 'busy' && c.attempts === 1 && c.latest_call_id)).to.equal(true);
    expect(new Set(contacts.map((c) => c.latest_call_id)).size).to.equal(CONTACTS);
    // One call per contact, no more: none was placed twice across runs.
    const dialled = providers.telephony.calls().filter((c) => numbers.includes(c.to));
    expect(dialled).to.have.length(CONTACTS);
    expect(await Call.countDocuments({ workspace_id: owner.workspaceId })).to.equal(CONTACTS);
  });
});
