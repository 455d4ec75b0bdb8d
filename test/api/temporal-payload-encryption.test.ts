import { expect } from 'chai';
import { Client, Connection } from '@temporalio/client';
import { ENCRYPTED_ENCODING } from '../../domain/shared/payload-encryption';
import { workflowIds } from '../../contracts/ids';
import { approveSignal, stateQuery } from '../../contracts/kyc';
import { activeOwner, signUp, withJson, type SignedUp } from '../support/accounts';
import { startApi, type RunningApi } from '../support/api';
import { TEST_CODEC_SERVER_TOKEN } from '../support/codec-server';
import { testEncryption } from '../support/payload-keys';
import { randomNumbers, startTestProviders, type TestProviders } from '../support/providers';
import { createLocal } from '../support/servers';
import { until } from '../support/until';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { agentsClient } from './agents/helpers';
import { readyToSubmit } from './kyc/fixtures';

const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };

/** A history, a description or a query answer as proto3 JSON (bytes in base64), as the frontend hands them to anyone. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
interface JsonPayload {
  metadata: Record<string, string>;
  data?: string;
}

/**
 * The payloads Temporal keeps readable by design, scanned for secrets all the same: search
 * attributes (ids and statuses, for the UI's lists) and the SDK core's own markers, a patch's id
 * (`patch-data`) and a local activity's bookkeeping (`data`: sequence, type, attempt, times; its
 * result is a payload of ours, encrypted).
 */
const SDK_PLAINTEXT = /\.indexedFields\.|\.markerRecordedEventAttributes\.details\.(patch-data|data)\./;

const base64Text = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');

/** Every payload in `json`, with the path it sits at. */
function payloadsIn(json: Json, path = ''): { path: string; payload: JsonPayload }[] {
  if (json === null || typeof json !== 'object') return [];
  if (json.metadata && typeof json.metadata === 'object' && typeof json.metadata.encoding === 'string') return [{ path, payload: json as JsonPayload }];
  return Object.entries(json).flatMap(([key, value]) => payloadsIn(value, `${path}.${key}`));
}

/** What a reader of the raw JSON can read: every string, and every payload's bytes as text. */
function readableText(json: Json): string {
  const strings: string[] = [];
  const walk = (value: Json) => {
    if (typeof value === 'string') strings.push(value);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(json);
  for (const { payload } of payloadsIn(json)) strings.push(base64Text(payload.data), ...Object.values(payload.metadata).map(base64Text));
  return strings.join('\n');
}

/**
 * Issue 29, item 4: callers' data in Temporal. A call and a KYC review run for real (API,
 * workers, media service, simulators, dev server); their histories, descriptions and current
 * details, read raw from the frontend by a client WITHOUT the codec, hold neither the callee's
 * number nor the member's name or email, and every payload in them is encrypted (search
 * attributes apart: ids and statuses). Through the codec (the API's codec server) they decode.
 */
describe("Callers' data in Temporal is encrypted", function () {
  this.timeout(180_000);
  let providers: TestProviders;
  let api: RunningApi;
  let receiver: WebhookReceiver;
  let raw: Client;
  const namespace = () => createLocal().namespace ?? 'default';

  before(async () => {
    providers = await startTestProviders({ timeScale: 0.05 });
    receiver = await startWebhookReceiver();
    api = await startApi({ workers: ['ops', 'calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
    // A client of the frontend as anyone reaching its port has one: no plugin, no codec.
    raw = new Client({ connection: await Connection.connect({ address: createLocal().address }), namespace: namespace() });
  });
  after(async () => {
    await raw?.connection.close();
    await api?.close();
    await providers?.close();
    await receiver?.close();
  });

  /** The history, the description and the current details of `workflowId` as raw JSON. */
  async function rawViews(workflowId: string): Promise<Record<string, Json>> {
    const execution = { workflowId };
    const history = await raw.workflowService.getWorkflowExecutionHistory({ namespace: namespace(), execution });
    const description = await raw.workflowService.describeWorkflowExecution({ namespace: namespace(), execution });
    // The UI's "current details": the built-in metadata query, answered by a worker.
    const metadata = await raw.workflowService.queryWorkflow({ namespace: namespace(), execution, query: { queryType: '__temporal_workflow_metadata' } });
    return { history: history.toJSON(), description: description.toJSON(), metadata: metadata.toJSON() };
  }

  /** Fails naming the view and the first secret found in plaintext; checks every payload is encrypted. */
  async function expectNothingReadable(workflowIds: string[], secrets: string[]): Promise<void> {
    for (const workflowId of workflowIds) {
      for (const [view, json] of Object.entries(await rawViews(workflowId))) {
        const text = readableText(json);
        for (const secret of secrets) expect(text.includes(secret), `${secret} in plaintext in the ${view} of ${workflowId}`).to.equal(false);
        const plaintext = payloadsIn(json).filter(
          ({ path, payload }) => !SDK_PLAINTEXT.test(path) && base64Text(payload.metadata.encoding) !== ENCRYPTED_ENCODING,
        );
        expect(
          plaintext.map(({ path }) => path),
          `plaintext payloads in the ${view} of ${workflowId}`,
        ).to.deep.equal([]);
      }
    }
  }

  /** The raw history decoded by the API's codec server (as the Web UI and the CLI decode it), as text. */
  async function decodedThroughCodecServer(workflowId: string): Promise<string> {
    const { history } = await rawViews(workflowId);
    const payloads = payloadsIn(history).map(({ payload }) => payload);
    const res = await api.request('/codec/decode', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TEST_CODEC_SERVER_TOKEN}`, 'X-Namespace': namespace() },
      body: JSON.stringify({ payloads }),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    return readableText((await res.json()).payloads);
  }

  it("a call: the callee's number and the member's name appear nowhere raw, and decode through the codec", async () => {
    const name = 'Meera Iyengar';
    const owner: SignedUp = await activeOwner(api, { name });
    const agent = await agentsClient(api, owner.auth).created({
      name: 'Support',
      welcome_message: 'Hello from Acme.',
      call: OPEN_HOURS,
      webhook_url: `${receiver.url}/hooks`,
    });
    const [to] = randomNumbers(1).map((n) => n.replace('+9180', '+9198'));
    providers.telephony.setCallee(to!, {
      kind: 'answer',
      answerAfterSeconds: 1,
      conversation: [{ say: 'Where is my parcel?' }, { hangUp: true, afterAgentSilenceMs: 600 }],
    });
    const res = await api.request(
      '/api/v1/calls',
      withJson('POST', { agent_id: agent.id, to_number: to, from_number: await providers.callerFor(owner.workspaceId) }, owner.auth),
    );
    expect(res.status, await res.clone().text()).to.equal(201);
    const call = (await res.json()) as { id: string; from_number: string };
    // The workflow's result (and so its analytics child) through the test client, which has the codec.
    const handle = createLocal().client.workflow.getHandle(workflowIds.call(call.id));
    const state = await handle.result();
    expect(state.status).to.equal('completed');
    expect(await handle.describe().then((d) => d.staticSummary())).to.equal(`outbound call to ${to} from ${call.from_number} with Support`);

    // Every workflow of the workspace: the call, its slot keeper, its analytics, its webhook deliveries.
    const deliveries = await until(
      async () => {
        const ids: string[] = [];
        for await (const execution of raw.workflow.list({ query: `WorkspaceId="${owner.workspaceId}"` })) ids.push(execution.workflowId);
        return ids;
      },
      (ids) => ids.includes(workflowIds.analytics(call.id)) && ids.filter((id) => !/^(call|slots|analytics)-/.test(id)).length >= 2,
      30_000,
      250,
    );
    expect(deliveries).to.include.members([workflowIds.call(call.id), workflowIds.slots(owner.workspaceId), workflowIds.analytics(call.id)]);
    await expectNothingReadable(deliveries, [to!, to!.slice(1), name]);

    // The control: the scan finds them once the codec server has decoded the same history.
    const decoded = await decodedThroughCodecServer(workflowIds.call(call.id));
    expect(decoded).to.include(to).and.include(name);
  });

  it("a KYC review: the submitter's name and email and the staff member appear nowhere raw, and decode through the codec", async () => {
    const name = 'Kavya Raghunathan';
    const email = `kavya.${Date.now()}@example.com`;
    const staff = 'reviewer.anand@example.com';
    const owner = await signUp(api, { name, email });
    await readyToSubmit(api, owner.auth);
    expect((await api.request('/api/v1/kyc/submit', { method: 'POST', headers: owner.auth })).status).to.equal(202);
    const handle = createLocal().client.workflow.getHandle(workflowIds.kyc(owner.workspaceId));
    const state = await until(
      () => handle.query(stateQuery),
      (s) => s.status === 'awaiting_review',
    );
    expect(state.submittedBy.name).to.equal(name);
    expect(await handle.describe().then((d) => d.staticDetails()))
      .to.contain(name)
      .and.contain(email);
    await handle.signal(approveSignal, { by: staff });
    await handle.result();

    await expectNothingReadable([workflowIds.kyc(owner.workspaceId)], [name, email, staff]);
    const decoded = await decodedThroughCodecServer(workflowIds.kyc(owner.workspaceId));
    expect(decoded).to.include(name).and.include(email).and.include(staff);
    // The same payloads with the tests' key directly: the codec server is that codec.
    const { history } = await rawViews(workflowIds.kyc(owner.workspaceId));
    const direct = payloadsIn(history).map(({ payload }) =>
      testEncryption.codec.decrypt({
        metadata: Object.fromEntries(Object.entries(payload.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
        data: Buffer.from(payload.data ?? '', 'base64'),
      }),
    );
    expect(direct.map((p) => Buffer.from(p.data ?? []).toString('utf8')).join('\n')).to.include(staff);
  });
});
