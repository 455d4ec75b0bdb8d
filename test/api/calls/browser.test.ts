import { expect } from 'chai';
import WebSocket from 'ws';
import { LedgerItem } from '../../../db/models/ledger-item';
import { Workspace } from '../../../db/models/workspace';
import { newId } from '../../../db/ids';
import { appendLedgerItem, balanceOf } from '../../../domain/billing/ledger';
import { signStreamToken, streamTokenClaims } from '../../../domain/calls/stream-token';
import { activeOwner, apiKeyFor, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { startApi, TEST_AUTH_CONFIG, type ApiResponse, type RunningApi } from '../../support/api';
import { BrowserCallClient } from '../../support/browser-call-client';
import { startTestProviders, type TestProviders } from '../../support/providers';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';
import { contractCallCost } from '../../support/charges';

type Call = Record<string, unknown> & { id: string; status: string; transcript: { role: string; text: string; interrupted: boolean }[] };
type TimelineEntry = { type: string; message: string; level: string; data: Record<string, unknown> };
type BrowserCall = { call_id: string; websocket_url: string; page_url: string; token: string; expires_at: string };

const BUSY = 'all call slots are busy; try again when a call ends';

/**
 * Browser calls end to end: POST /calls/browser admits the call and names the media node's
 * WebSocket and page; a Node client plays the page's part (mu-law frames of simulated speech
 * in, the agent's audio and transcript lines out); the media service runs the conversation
 * against the recognition, language-model and synthesis simulators. Real API, workers, media
 * service, FerretDB and Temporal.
 */
describe("Browser calls (POST /calls/browser, the media node's browser stream)", function () {
  this.timeout(120_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;

  const createAgent = async (settings: Record<string, unknown> = {}, who: SignedUp = owner) =>
    agentsClient(api, who.auth).created({ name: 'Asha', voice: { voice_id: 'meera', language: 'en-IN' }, ...settings });
  const startCall = (body: Record<string, unknown>, headers: Record<string, string> = owner.auth): Promise<ApiResponse> =>
    api.request('/api/v1/calls/browser', withJson('POST', body, headers));
  const started = async (agentId: string, who: SignedUp = owner, userData?: Record<string, unknown>): Promise<BrowserCall> => {
    const res = await startCall({ agent_id: agentId, ...(userData ? { user_data: userData } : {}) }, who.auth);
    expect(res.status, await res.clone().text()).to.equal(201);
    return res.json();
  };
  const getCall = async (id: string, who: SignedUp = owner): Promise<Call> => (await api.request(`/api/v1/calls/${id}`, { headers: who.auth })).json();
  const timeline = async (id: string, who: SignedUp = owner): Promise<TimelineEntry[]> =>
    (await api.request(`/api/v1/calls/${id}/events`, { headers: who.auth })).json();
  const finished = async (id: string, who: SignedUp = owner) => {
    const events = await until(
      () => timeline(id, who),
      (list) => list.some((e) => e.type === 'call.completed'),
      60_000,
    );
    return { call: await getCall(id, who), events };
  };
  const activeCalls = async (who: SignedUp): Promise<number> =>
    (await (await api.request('/api/v1/workspace/limits', { headers: who.auth })).json()).active_calls;

  before(async () => {
    providers = await startTestProviders();
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
    owner = await activeOwner(api, { name: 'Asha Rao' });
  });
  after(async () => {
    await api?.close();
    await providers?.close();
  });

  it('a browser call: URLs of the media node, the welcome heard, speech in, transcript out, hang-up by closing, charged once', async () => {
    const agent = await createAgent({ welcome_message: 'Hello {name}, this is Asha.', system_prompt: 'You help {name}.' });
    const balance = await balanceOf(owner.workspaceId);
    const answer = await started(agent.id, owner, { name: 'Ravi' });

    // The URLs point at the media node running the call (it registered itself), with a 60 s browser token.
    const media = api.media!;
    const callId = answer.call_id;
    const token = encodeURIComponent(answer.token);
    expect(answer.websocket_url).to.equal(`${media.publicUrl}/browser/calls/${callId}?token=${token}`);
    expect(answer.page_url).to.equal(`${media.publicUrl.replace(/^ws/, 'http')}/browser?call=${callId}&token=${token}`);
    expect(Date.parse(answer.expires_at) - Date.now()).to.be.within(50_000, 61_000);
    expect(streamTokenClaims(TEST_AUTH_CONFIG.secret, answer.token, 'browser')?.callId).to.equal(callId);
    expect(streamTokenClaims(TEST_AUTH_CONFIG.secret, answer.token, 'telephony'), 'not a telephony stream token').to.equal(null);
    const live = await getCall(callId);
    expect(live).to.include({ status: 'in-progress', direction: 'browser', placed_by: 'Asha Rao', from_number: '' });
    expect(live.user_data).to.deep.equal({ name: 'Ravi' });

    const client = await BrowserCallClient.connect(answer.websocket_url);
    await client.untilAgentQuiet();
    expect(client.heard).to.include('Hello Ravi, this is Asha.');
    expect(client.transcript()[0]).to.deep.equal({ role: 'assistant', text: 'Hello Ravi, this is Asha.', interrupted: false });

    await client.say('Where is my order?');
    await client.frame((f) => f.event === 'transcript' && f.role === 'assistant' && String(f.text).startsWith('You said'));
    await client.untilAgentQuiet();
    expect(client.transcript()).to.deep.equal([
      { role: 'assistant', text: 'Hello Ravi, this is Asha.', interrupted: false },
      { role: 'user', text: 'Where is my order?', interrupted: false },
      { role: 'assistant', text: 'You said: Where is my order. How can I help further?', interrupted: false },
    ]);
    expect(client.heard).to.include('How can I help further?');

    // Closing the page's socket is the caller hanging up.
    await client.disconnect();
    const { call, events } = await finished(callId);
    expect(events.map((e) => e.type)).to.deep.equal([
      'call.started',
      'welcome',
      'tts.first_audio',
      'user.turn',
      'llm.first_token',
      'tts.first_audio',
      'agent.reply',
      'call.ended',
      'call.completed',
    ]);
    const startedEvent = events[0]!;
    expect(startedEvent.message).to.equal('browser call with Asha');
    expect(startedEvent.data).to.include({ channel: 'browser', started_by: 'Asha Rao', from: '' });
    expect(startedEvent.data.values).to.deep.equal(['name']);
    expect(events.find((e) => e.type === 'user.turn')!.message).to.equal('Where is my order?');
    expect(events.find((e) => e.type === 'call.ended')!.message).to.equal('ended by caller: the caller hung up');
    expect(call).to.include({ status: 'completed', direction: 'browser', hangup_by: 'caller', hangup_reason: 'the caller hung up' });
    expect(call.transcript.map((t) => [t.role, t.text])).to.deep.equal([
      ['assistant', 'Hello Ravi, this is Asha.'],
      ['user', 'Where is my order?'],
      ['assistant', 'You said: Where is my order. How can I help further?'],
    ]);
    // Charged like any call: one `call` item, ceil(duration * 400 / 60).
    const duration = call.duration_seconds as number;
    expect(duration).to.be.above(3);
    expect(call.cost_paise).to.equal(contractCallCost(duration));
    const items = await LedgerItem.find({ call_id: callId }).lean();
    expect(items.map((i) => [i.kind, i.amount_paise])).to.deep.equal([['call', -(call.cost_paise as number)]]);
    expect(await balanceOf(owner.workspaceId)).to.equal(balance - (call.cost_paise as number));
    expect(await activeCalls(owner)).to.equal(0);
  });

  it("the page's stop frame is a hang-up too", async () => {
    const agent = await createAgent({ welcome_message: 'Hi.' });
    const answer = await started(agent.id);
    const client = await BrowserCallClient.connect(answer.websocket_url);
    await client.untilAgentQuiet();
    await client.hangUp();
    const { call, events } = await finished(answer.call_id);
    expect(call).to.include({ status: 'completed', hangup_by: 'caller', hangup_reason: 'the caller hung up' });
    expect(events.filter((e) => e.type === 'call.ended').map((e) => e.message)).to.deep.equal(['ended by caller: the caller hung up']);
  });

  it('at the concurrency limit (1, held by a live browser call) the next is 409 "all call slots are busy", not recorded; an API hang-up ends the live one and frees the slot', async () => {
    const limited = await activeOwner(api, { name: 'Meera Iyer' });
    await Workspace.updateOne({ _id: limited.workspaceId }, { $set: { concurrency_limit: 1 } });
    const agent = await createAgent({ welcome_message: 'Hello.' }, limited);
    const first = await started(agent.id, limited);
    const client = await BrowserCallClient.connect(first.websocket_url);
    await client.untilAgentQuiet();
    expect(await activeCalls(limited)).to.equal(1);

    const refused = await startCall({ agent_id: agent.id }, limited.auth);
    expect(refused.status).to.equal(409);
    expect((await refused.json()).detail).to.equal(BUSY);
    const list = await (await api.request('/api/v1/calls', { headers: limited.auth })).json();
    expect(list.total, 'a refused browser call leaves no record').to.equal(1);

    // Hang-up through the API: the conversation stops, the page hears `ended` and its socket closes.
    const hungUp = await api.request(`/api/v1/calls/${first.call_id}/hangup`, { method: 'POST', headers: limited.auth });
    expect(hungUp.status).to.equal(200);
    expect(await hungUp.json()).to.include({ status: 'completed', hangup_by: 'Meera Iyer', hangup_reason: 'hung up through the API' });
    expect((await client.frame((f) => f.event === 'ended')).reason).to.be.a('string');
    expect((await client.closed).code).to.equal(1000);
    const { call, events } = await finished(first.call_id, limited);
    expect(events.find((e) => e.type === 'call.ended')!.message).to.equal('ended by Meera Iyer: hung up through the API');
    expect(call.cost_paise).to.be.above(0);

    // The slot is free again.
    const again = await started(agent.id, limited);
    const second = await BrowserCallClient.connect(again.websocket_url);
    await second.untilAgentQuiet();
    await second.disconnect();
    await finished(again.call_id, limited);
  });

  it('refusals: balance at zero 402, paused agent 409, unknown agent 422, viewer 403; an API key may start one', async () => {
    const broke = await activeOwner(api);
    const brokeAgent = await createAgent({}, broke);
    await appendLedgerItem({
      workspaceId: broke.workspaceId,
      kind: 'adjustment',
      amountPaise: -(await balanceOf(broke.workspaceId)),
      idempotencyKey: `test-zero-${newId()}`,
      at: new Date(),
    });
    const noCredits = await startCall({ agent_id: brokeAgent.id }, broke.auth);
    expect(noCredits.status).to.equal(402);
    expect((await noCredits.json()).detail).to.match(/^out of credits: add credits in billing/);

    const paused = await createAgent({ name: 'Resting', status: 'paused' });
    const toPaused = await startCall({ agent_id: paused.id });
    expect(toPaused.status).to.equal(409);
    expect((await toPaused.json()).detail).to.equal('the agent "Resting" is paused and takes no calls; set its status to active first');

    const unknown = await startCall({ agent_id: newId() });
    expect(unknown.status).to.equal(422);
    expect((await unknown.json()).detail[0].loc).to.deep.equal(['body', 'agent_id']);

    const agent = await createAgent();
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    const byViewer = await startCall({ agent_id: agent.id }, viewer.headers);
    expect(byViewer.status).to.equal(403);
    expect((await byViewer.json()).detail).to.include('calls.place');
    for (const workspace of [broke, owner]) {
      const calls = await (await api.request('/api/v1/calls?direction=browser&status=failed', { headers: workspace.auth })).json();
      expect(calls.total, 'refusals leave no record').to.equal(0);
    }

    const key = await apiKeyFor(owner.workspaceId, 'kiosk');
    const byKey = await startCall({ agent_id: agent.id }, key.headers);
    expect(byKey.status).to.equal(201);
    const { call_id } = await byKey.json();
    expect(await getCall(call_id)).to.include({ placed_by: 'key:kiosk', direction: 'browser' });
    const ended = await api.request(`/api/v1/calls/${call_id}/hangup`, { method: 'POST', headers: owner.auth });
    expect(ended.status).to.equal(200);
    await finished(call_id);
  });

  it('the stream refuses a missing, expired, foreign or telephony token with 401 (no WebSocket)', async () => {
    const media = api.media!;
    const callId = newId();
    const url = (token: string, id = callId) => `${media.publicUrl}/browser/calls/${id}?token=${encodeURIComponent(token)}`;
    const statusOf = async (target: string) =>
      BrowserCallClient.connect(target).then(
        async (client) => {
          await client.disconnect();
          return 101;
        },
        (error: { status?: number }) => error.status,
      );
    expect(await statusOf(`${media.publicUrl}/browser/calls/${callId}`)).to.equal(401);
    expect(await statusOf(url(signStreamToken(TEST_AUTH_CONFIG.secret, callId, -5, 'browser')))).to.equal(401);
    expect(await statusOf(url(signStreamToken(TEST_AUTH_CONFIG.secret, newId(), 60, 'browser')))).to.equal(401);
    expect(await statusOf(url(signStreamToken(TEST_AUTH_CONFIG.secret, callId, 60, 'telephony')))).to.equal(401);
    expect(await statusOf(url(signStreamToken('another-secret-that-is-at-least-32-characters', callId, 60, 'browser')))).to.equal(401);
    expect(await statusOf(url(owner.token))).to.equal(401);
    // A browser token does not open a telephony stream either.
    const telephony = await new Promise<number | undefined>((resolve) => {
      const token = signStreamToken(TEST_AUTH_CONFIG.secret, callId, 60, 'browser');
      const socket = new WebSocket(`${media.publicUrl}/telephony/streams/${callId}?token=${token}`);
      socket.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode);
        socket.terminate();
      });
      socket.once('open', () => {
        resolve(101);
        socket.close();
      });
      socket.on('error', () => undefined);
    });
    expect(telephony).to.equal(401);
  });

  it('GET /browser on the media node serves the call page', async () => {
    const res = await fetch(`${api.media!.url}/browser?call=${newId()}&token=x`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
    const html = await res.text();
    expect(html).to.include('<ul id="transcript">').and.include('window.voiceCall');
    expect((await fetch(`${api.media!.url}/browser`, { method: 'POST' })).status).to.equal(405);
  });
});
