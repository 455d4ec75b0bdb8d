import { expect } from 'chai';
import { Call as CallRecord } from '../../../db/models/call';
import { LedgerItem } from '../../../db/models/ledger-item';
import { Workspace } from '../../../db/models/workspace';
import { appendLedgerItem, balanceOf } from '../../../domain/billing/ledger';
import { newId } from '../../../db/ids';
import type { CallbackParams } from '../../../providers/telephony/callbacks';
import type { InboundCallerScript, SimulatedCall } from '../../../simulators/telephony/simulator';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, type ApiResponse, type RunningApi } from '../../support/api';
import { startTestProviders, type TestProviders } from '../../support/providers';
import { postProviderCallback } from '../../support/provider-callbacks';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';
import { contractCallCost } from '../../support/charges';

/** The simulator plays callers' scripts 20 times faster (their delays; audio plays in real time). */
const TIME_SCALE = 0.05;
const FINAL = ['completed', 'no-answer', 'busy', 'failed', 'canceled'];
const CALLER = '+919845012345';

type Call = Record<string, unknown> & { id: string; status: string; transcript: { role: string; text: string }[] };
type TimelineEntry = { type: string; message: string; level: string; data: Record<string, unknown> };

/**
 * Inbound calls end to end: the telephony simulator plays a caller dialling one of the
 * account's numbers; it asks the API's inbound answer URL (as a Plivo application would),
 * follows the XML (the audio stream to the media service, or a rejection) and posts the
 * call's end to the inbound hang-up URL. Real API, workers, media service, FerretDB and Temporal.
 */
describe('Inbound calls (a caller dials a number of the workspace)', function () {
  this.timeout(120_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let unclaimed: string[];
  const answerPath = '/telephony/inbound/answer';
  const statusPath = '/telephony/inbound/status';

  /** A number of the account's pool taken into the workspace, connected to a new agent unless `agent` is null. */
  const numberWith = async (who: SignedUp, agent: Record<string, unknown> | null): Promise<{ number: string; agentId: string | null }> => {
    const number = unclaimed.shift()!;
    const res = await api.request('/api/v1/phone-numbers', withJson('POST', { number }, who.auth));
    expect(res.status, await res.clone().text()).to.equal(201);
    if (!agent) return { number, agentId: null };
    const created = await agentsClient(api, who.auth).created({
      name: 'Asha',
      voice: { voice_id: 'meera', language: 'en-IN' },
      phone_number: number,
      ...agent,
    });
    return { number, agentId: created.id };
  };
  const dial = (to: string, caller: InboundCallerScript = {}, from = CALLER): SimulatedCall => providers.telephony.dialInbound({ from, to, caller });
  const simulated = (call: SimulatedCall): SimulatedCall => providers.telephony.calls().find((c) => c.providerCallId === call.providerCallId)!;
  /** The simulated call once it has ended at the provider, with its hang-up callback delivered. */
  const overAtProvider = async (call: SimulatedCall): Promise<SimulatedCall> =>
    until(
      async () => simulated(call),
      (c) => FINAL.includes(c.status) && c.callbacks.every((d) => d.delivered),
    );
  const inboundCalls = async (number: string, who: SignedUp = owner): Promise<Call[]> =>
    (await (await api.request(`/api/v1/calls?direction=inbound&number=${encodeURIComponent(number)}`, { headers: who.auth })).json()).items;
  const timeline = async (id: string, who: SignedUp = owner): Promise<TimelineEntry[]> =>
    (await api.request(`/api/v1/calls/${id}/events`, { headers: who.auth })).json();
  const activeCalls = async (who: SignedUp): Promise<number> =>
    (await (await api.request('/api/v1/workspace/limits', { headers: who.auth })).json()).active_calls;

  /** A rejected call: the caller was never answered, and the workspace shows one failed inbound call with `reason`. */
  const expectRejected = async (dialled: SimulatedCall, reason: string, level: string, who: SignedUp = owner): Promise<Call> => {
    const atProvider = await overAtProvider(dialled);
    expect(atProvider.history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'completed']);
    expect(atProvider.streamConnected).to.equal(false);
    const [call, ...more] = (await inboundCalls(dialled.to, who)).filter((c) => c.from_number === dialled.from);
    expect(more).to.be.empty;
    expect(call).to.include({
      direction: 'inbound',
      status: 'failed',
      hangup_by: 'system',
      hangup_reason: reason,
      from_number: dialled.from,
      to_number: dialled.to,
      placed_by: dialled.from,
      cost_paise: null,
      duration_seconds: null,
      started_at: null,
    });
    const events = await timeline(call.id, who);
    expect(events.map((e) => [e.type, e.message, e.level])).to.deep.equal([['call.ended', reason, level]]);
    return call;
  };

  /** A request as the provider would post it, signed over the public URL unless told otherwise. */
  const postSigned = (path: string, params: CallbackParams, options: { token?: string; signedUrl?: string } = {}): Promise<ApiResponse> =>
    postProviderCallback(api, options.token ?? providers.telephony.authToken, `/api/v1${path}`, params, { signedUrl: options.signedUrl });

  before(async () => {
    providers = await startTestProviders({ timeScale: TIME_SCALE });
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
    providers.telephony.setInboundUrls({ answerUrl: `${api.baseUrl}/api/v1${answerPath}`, hangupUrl: `${api.baseUrl}/api/v1${statusPath}` });
    owner = await activeOwner(api, { name: 'Asha Rao' });
    unclaimed = [...providers.pool];
  });
  after(async () => {
    await api?.close();
    await providers?.close();
  });

  it('a call to a number connected to an active agent is answered by it: call.started, the welcome, a turn, the caller hangs up; charged', async () => {
    const { number, agentId } = await numberWith(owner, { welcome_message: 'Hello from Acme.' });
    const dialled = dial(number, { conversation: [{ say: 'Where is it?' }, { hangUp: true, afterAgentSilenceMs: 600 }] });
    expect(dialled).to.include({ direction: 'inbound', from: CALLER, to: number });

    const [placed] = await until(
      () => inboundCalls(number),
      (calls) => calls.length > 0,
    );
    expect(placed, 'the inbound call is recorded').to.exist;
    const events = await until(
      () => timeline(placed.id),
      (list) => list.some((e) => e.type === 'call.completed'),
      60_000,
    );
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
    const [started] = events;
    expect(started.message).to.equal('inbound call with Asha');
    expect(started.data).to.deep.include({ channel: 'phone', from: CALLER, to: number, started_by: '', values: [] });
    expect(events.find((e) => e.type === 'user.turn')!.message).to.equal('Where is it?');
    const ended = events.find((e) => e.type === 'call.ended')!;
    expect(ended).to.deep.include({ message: 'ended by caller: the caller hung up', level: 'info' });

    const call: Call = await (await api.request(`/api/v1/calls/${placed.id}`, { headers: owner.auth })).json();
    expect(call).to.include({
      agent_id: agentId,
      agent_name: 'Asha',
      direction: 'inbound',
      from_number: CALLER,
      to_number: number,
      placed_by: CALLER,
      status: 'completed',
      hangup_by: 'caller',
      hangup_reason: 'the caller hung up',
    });
    expect(call.transcript.map((t) => [t.role, t.text])).to.deep.equal([
      ['assistant', 'Hello from Acme.'],
      ['user', 'Where is it?'],
      ['assistant', 'You said: Where is it. How can I help further?'],
    ]);
    // Billing rules 1 and 2: the agent's live time, one `call` ledger item.
    const duration = call.duration_seconds as number;
    expect(duration).to.be.above(1);
    expect(ended.data.duration_seconds).to.equal(duration);
    expect(call.cost_paise).to.equal(contractCallCost(duration));
    const items = await LedgerItem.find({ call_id: placed.id }).lean();
    expect(items.map((i) => [i.kind, i.amount_paise])).to.deep.equal([['call', -(call.cost_paise as number)]]);

    // At the provider: rung, answered by the stream, hung up by the caller, who heard the welcome and the reply.
    const atProvider = await overAtProvider(dialled);
    expect(atProvider.history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'in-progress', 'completed']);
    expect(atProvider.callbacks.map((c) => [c.status, c.url, c.delivered])).to.deep.equal([
      ['ringing', `${api.baseUrl}/api/v1${answerPath}`, true],
      ['completed', `${api.baseUrl}/api/v1${statusPath}`, true],
    ]);
    const heard = atProvider.heard.map((h) => h.text).join(' ');
    for (const line of ['Hello from Acme.', 'How can I help further?']) expect(heard).to.include(line);
    expect(await activeCalls(owner)).to.equal(0);
  });

  it("a paused agent's number: rejected unanswered, recorded as a failed inbound call (agent paused)", async () => {
    const { number, agentId } = await numberWith(owner, { status: 'paused' });
    const call = await expectRejected(dial(number), 'agent paused', 'warning');
    expect(call).to.include({ agent_id: agentId, agent_name: 'Asha' });
  });

  it('a number connected to no agent: rejected and recorded (number not connected); a number no workspace holds: rejected, recorded nowhere', async () => {
    const { number } = await numberWith(owner, null);
    const call = await expectRejected(dial(number), 'number not connected', 'warning');
    expect(call).to.include({ agent_id: '', agent_name: '' });

    const nobodys = dial(unclaimed.shift()!);
    const atProvider = await overAtProvider(nobodys);
    expect(atProvider.history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'completed']);
    expect(await CallRecord.countDocuments({ to_number: nobodys.to })).to.equal(0);
  });

  it('a number of a closed workspace whose data is erased (docs/decisions/0210): rejected, recorded nowhere', async () => {
    const closing = await activeOwner(api);
    const { number } = await numberWith(closing, {});
    // As the closure's workflow leaves it once its grace period has passed (test/api/privacy/workspace-closure.test.ts runs that).
    const at = new Date();
    await Workspace.updateOne(
      { _id: closing.workspaceId },
      {
        $set: {
          closure: { id: newId(), status: 'erasing', requested_at: at, requested_by: { user_id: null, name: 'Asha Rao' }, erase_at: at, erased_at: null },
        },
      },
    );
    const dialled = dial(number);
    const atProvider = await overAtProvider(dialled);
    expect(atProvider.history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'completed']);
    expect(atProvider.streamConnected).to.equal(false);
    expect(await CallRecord.countDocuments({ workspace_id: closing.workspaceId })).to.equal(0);
  });

  it('at the concurrency limit: rejected (concurrency limit reached) while a live call holds the slot; the live one hangs up through the API', async () => {
    const limited = await activeOwner(api, { name: 'Ravi Iyer' });
    await Workspace.updateOne({ _id: limited.workspaceId }, { $set: { concurrency_limit: 1 } });
    const { number } = await numberWith(limited, { welcome_message: 'Hello.' });
    const first = dial(number, {}, '+919845000001');
    const [live] = await until(
      () => inboundCalls('+919845000001', limited),
      (calls) => calls[0]?.status === 'in-progress',
    );
    expect(live).to.include({ status: 'in-progress' });
    await until(
      async () => simulated(first),
      (c) => c.streamConnected,
    );

    await expectRejected(dial(number, {}, '+919845000002'), 'concurrency limit reached', 'warning', limited);

    const res = await api.request(`/api/v1/calls/${live.id}/hangup`, { method: 'POST', headers: limited.auth });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.include({ status: 'completed', hangup_by: 'Ravi Iyer', hangup_reason: 'hung up through the API' });
    // The provider hung up the caller (who would have stayed on), and the slot is free again.
    expect((await overAtProvider(first)).history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'in-progress', 'completed']);
    expect(
      await until(
        () => activeCalls(limited),
        (n) => n === 0,
      ),
    ).to.equal(0);
  });

  it('at a balance of zero: rejected (out of credits, an error on the timeline), nothing charged', async () => {
    const poor = await activeOwner(api);
    await appendLedgerItem({
      workspaceId: poor.workspaceId,
      kind: 'adjustment',
      amountPaise: -(await balanceOf(poor.workspaceId)),
      idempotencyKey: `test:${newId()}`,
      at: new Date(),
      note: 'test: empty the balance',
    });
    const { number } = await numberWith(poor, {});
    await expectRejected(dial(number), 'out of credits', 'error', poor);
    expect(await balanceOf(poor.workspaceId)).to.equal(0);
  });

  it('requests not signed by the provider are 403 and take no call; bad fields are 400; a repeated answer request answers the same call', async () => {
    const { number } = await numberWith(owner, { status: 'paused' });
    const uuid = newId();
    const ringing: CallbackParams = { From: CALLER.slice(1), To: number.slice(1), CallUUID: uuid, Direction: 'inbound', CallStatus: 'ringing' };
    const forged: [string, Promise<ApiResponse>][] = [
      ['answer signed with another token', postSigned(answerPath, ringing, { token: 'not-the-auth-token' })],
      ['answer signed for another URL', postSigned(answerPath, ringing, { signedUrl: `${api.baseUrl}/api/v1${statusPath}` })],
      ['status signed with another token', postSigned(statusPath, { CallUUID: uuid, CallStatus: 'completed', Duration: '3' }, { token: 'not-the-auth-token' })],
    ];
    for (const [what, response] of forged) {
      const res = await response;
      expect(res.status, what).to.equal(403);
      expect((await res.json()).detail, what).to.match(/not signed by the telephony provider/);
    }
    const unsigned = await api.request(`/api/v1${answerPath}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(ringing).toString(),
    });
    expect(unsigned.status).to.equal(403);
    expect(await inboundCalls(number)).to.be.empty;

    expect((await postSigned(answerPath, { ...ringing, Direction: 'outbound' })).status).to.equal(400);
    expect((await postSigned(answerPath, { To: ringing.To, CallUUID: uuid })).status).to.equal(400);

    // Signed: rejected (the agent is paused) and recorded once, however often the provider asks.
    const first = await postSigned(answerPath, ringing);
    expect(first.status).to.equal(200);
    expect(await first.text()).to.include('<Hangup reason="rejected"/>');
    const again = await postSigned(answerPath, ringing);
    expect(again.status).to.equal(200);
    expect(await again.text()).to.include('<Hangup');
    const calls = await inboundCalls(number);
    expect(calls.map((c) => c.hangup_reason)).to.deep.equal(['agent paused']);
    // The hang-up of a refused call, and of a call never taken: 200, so that the provider stops retrying.
    expect((await postSigned(statusPath, { CallUUID: uuid, CallStatus: 'completed', Duration: '0' })).status).to.equal(200);
    expect((await postSigned(statusPath, { CallUUID: newId(), CallStatus: 'completed', Duration: '0' })).status).to.equal(200);
    expect(await inboundCalls(number)).to.have.length(1);
  });
});
