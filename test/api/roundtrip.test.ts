import { expect } from 'chai';
import { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { Probe } from '../../db/models/probe';
import { Kind } from '../../contracts/search-attributes';
import { jsonBody, startApi, type RunningApi } from '../support/api';
import { signUp } from '../support/accounts';
import { createLocal, registerSearchAttributes } from '../support/servers';

/** API -> workflow -> activity -> MongoDB -> API, on the Temporal dev server with real workers. */
describe('POST /health/roundtrip on the dev server', () => {
  let api: RunningApi;
  before(async () => (api = await startApi({ workers: ['ops'] })));
  after(() => api.close());

  it('goes through the workflow and its activity to MongoDB and back', async () => {
    const res = await api.request('/api/v1/health/roundtrip', jsonBody({ note: 'hello from the test' }, (await signUp(api)).auth));
    expect(res.status).to.equal(200);
    const body = await res.json();
    expect(body.probe_id).to.match(/^[0-9a-f]{32}$/);
    expect(body.workflow_id).to.equal(`roundtrip-${body.probe_id}`);
    expect(body.note).to.equal('hello from the test');
    expect(body.written_at).to.match(/\+05:30$/);

    // MongoDB holds what the activity wrote, and the API answered that document.
    const saved = await Probe.findById(body.probe_id).lean();
    expect(saved?.note).to.equal('hello from the test');
    expect(saved?.written_at.getTime()).to.equal(Date.parse(body.written_at));

    // Temporal ran the workflow to completion, with the activity in its history.
    const handle = createLocal().client.workflow.getHandle(body.workflow_id, body.run_id);
    const description = await handle.describe();
    expect(description.status.name).to.equal('COMPLETED');
    expect(description.typedSearchAttributes.get(Kind)).to.equal('probe');
    const history = await handle.fetchHistory();
    const activityTypes = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(activityTypes).to.deep.equal(['recordProbe']);
  });

  it('answers 503 with a hint when no worker polls the ops queue', async () => {
    // A namespace of its own, so that the shared workers of other tests cannot answer.
    const temporal = new Client({ connection: createLocal().connection, namespace: await freshNamespace() });
    const lonely = await startApi({ temporal, roundTripWaitMs: 1500 });
    try {
      const res = await lonely.request('/api/v1/health/roundtrip', jsonBody({}, (await signUp(lonely)).auth));
      expect(res.status).to.equal(503);
      expect((await res.json()).detail).to.include('"ops" task queue');
    } finally {
      await lonely.close();
    }
  });
});

async function freshNamespace(): Promise<string> {
  const namespace = `lonely-${Date.now()}`;
  const { workflowService } = createLocal().client;
  await workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  // A new namespace takes a moment to be served.
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      await workflowService.describeNamespace({ namespace });
      await registerSearchAttributes(createLocal().connection, namespace);
      return namespace;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`namespace ${namespace} was not served`);
}
