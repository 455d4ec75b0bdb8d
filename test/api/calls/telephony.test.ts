import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { balanceOf } from '../../../domain/billing/ledger';
import { newId } from '../../../db/ids';
import { Workspace } from '../../../db/models/workspace';
import type { CallbackParams } from '../../../providers/telephony/callbacks';
import { NONCE_HEADER, SIGNATURE_HEADER, plivoSignature } from '../../../simulators/telephony/plivo-signature';
import type { CalleeScript, SimulatedCall } from '../../../simulators/telephony/simulator';
import { slotKeeperId, slotsStateQuery } from '../../../contracts/slots';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, type ApiResponse, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { createLocal } from '../../support/servers';
import { agentsClient } from '../agents/helpers';
import { until } from '../../support/until';
import { localStepsOf } from '../../support/call-histories';
import { contractCallCost } from '../../support/charges';

/** Calling hours open all day, so that placed calls are dialled at once. */
const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };
/** The simulator plays callees' scripts 20 times faster: a 20 s conversation takes 1 s. */
const TIME_SCALE = 0.05;
const FINAL = ['completed', 'no-answer', 'busy', 'failed', 'canceled'];

type Call = Record<string, unknown> & { id: string; status: string };
type TimelineEntry = { type: string; message: string; level: string; data: Record<string, unknown>; at: string };

/**
 * Placed calls go through the provider for real: the worker dials the telephony simulator,
 * whose scripted callees post signed status callbacks to the API's callback route, which
 * signals the call's workflow. Real API, workers, FerretDB and Temporal.
 */
describe('Calls through the telephony provider (status callbacks)', function () {
  this.timeout(120_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let agent: {
    id: string;
    llm: { provider: string; model: string };
    voice: { provider: string; model: string };
    transcriber: { provider: string; model: string };
  };
  const temporal = () => createLocal().client;

  /** A fresh callee number that plays `script` when dialled. */
  const callee = (script: CalleeScript): string => {
    const [number] = randomNumbers(1).map((n) => n.replace('+9180', '+9198'));
    providers.telephony.setCallee(number, script);
    return number;
  };
  const place = async (to: string, who: SignedUp = owner, agentId = agent.id, userData?: Record<string, unknown>): Promise<Call> => {
    const res = await api.request(
      '/api/v1/calls',
      withJson(
        'POST',
        { agent_id: agentId, to_number: to, from_number: await providers.callerFor(who.workspaceId), ...(userData ? { user_data: userData } : {}) },
        who.auth,
      ),
    );
    expect(res.status, await res.clone().text()).to.equal(201);
    return res.json();
  };
  const getCall = async (id: string, who: SignedUp = owner): Promise<Call> => (await api.request(`/api/v1/calls/${id}`, { headers: who.auth })).json();
  const timeline = async (id: string, who: SignedUp = owner): Promise<TimelineEntry[]> =>
    (await api.request(`/api/v1/calls/${id}/events`, { headers: who.auth })).json();
  const ended = async (id: string, who: SignedUp = owner): Promise<Call> => {
    const call = await until(
      () => getCall(id, who),
      (c) => FINAL.includes(c.status),
    );
    expect(call.status, `call ${id} did not end`).to.be.oneOf(FINAL);
    // call.ended is written right after the final status.
    await until(
      () => timeline(id, who),
      (list) => list.some((e) => e.type === 'call.ended'),
    );
    return call;
  };
  const inProgress = async (id: string): Promise<void> => {
    const call = await until(
      () => getCall(id),
      (c) => c.status === 'in-progress' || FINAL.includes(c.status),
    );
    expect(call.status).to.equal('in-progress');
    // call.started is written right after the status.
    await until(
      () => timeline(id),
      (list) => list.some((e) => e.type === 'call.started'),
    );
  };
  const simulated = (to: string): SimulatedCall[] => providers.telephony.calls().filter((c) => c.to === to);
  const statusPath = (callId: string) => `/telephony/calls/${callId}/status`;
  /** A callback as the provider would post it (signed as Plivo signs, by the simulator's signer), with `token` over `signedUrl`. */
  const postCallback = (
    path: string,
    params: CallbackParams,
    options: { token?: string; signedUrl?: string; signedParams?: CallbackParams; unsigned?: boolean; nonce?: string } = {},
  ): Promise<ApiResponse> => {
    const nonce = options.nonce ?? randomBytes(8).toString('hex');
    const signature = plivoSignature(
      options.token ?? providers.telephony.authToken,
      'POST',
      options.signedUrl ?? `${api.baseUrl}/api/v1${path}`,
      options.signedParams ?? params,
      nonce,
    );
    const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
    if (!options.unsigned) Object.assign(headers, { [NONCE_HEADER]: nonce, [SIGNATURE_HEADER]: signature });
    return api.request(path.startsWith('/api') ? path : `/api/v1${path}`, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
  };

  before(async () => {
    providers = await startTestProviders({ timeScale: TIME_SCALE });
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
    owner = await activeOwner(api, { name: 'Asha Rao' });
    await providers.callerFor(owner.workspaceId);
    agent = await agentsClient(api, owner.auth).created({ name: 'Dialler', call: OPEN_HOURS });
  });
  after(async () => {
    await api.close();
    await providers.close();
  });

  it('an answered call: queued, dequeued, placed, started, ended; completed with the talk time, hung up by the caller', async () => {
    const to = callee({ kind: 'answer', answerAfterSeconds: 2, hangUpAfterSeconds: 40 });
    const placed = await place(to, owner, agent.id, { name: 'Ravi', order: 42 });
    const call = await ended(placed.id);

    const events = await until(
      () => timeline(placed.id),
      (list) => list.some((e) => e.type === 'call.completed'),
    );
    expect(events.map((e) => e.type)).to.deep.equal(['call.queued', 'call.dequeued', 'call.placed', 'call.started', 'call.ended', 'call.completed']);
    const descriptor = (m: { provider: string; model: string }) => `${m.provider}/${m.model}`;
    expect(events[3].data).to.deep.equal({
      channel: 'phone',
      from: providers.pool[0],
      to,
      stt: descriptor(agent.transcriber),
      llm: descriptor(agent.llm),
      tts: descriptor(agent.voice),
      started_by: '',
      values: ['name', 'order'],
    });
    // The callee hangs up 40 simulated seconds (2 s at this time scale) after answering; the agent was
    // live from its stream's arrival, a few hundred milliseconds after the answer.
    expect(events[4]).to.deep.include({ level: 'info', message: 'ended by caller: the caller hung up' });
    expect(events[4].data.duration_seconds).to.equal(call.duration_seconds);
    expect(call).to.include({ status: 'completed', hangup_by: 'caller', hangup_reason: 'the caller hung up' });
    expect(call.duration_seconds).to.be.within(1, 2.2);
    expect(call.cost_paise).to.equal(contractCallCost(call.duration_seconds as number));
    for (const field of ['dequeued_at', 'started_at', 'ended_at']) expect(call[field], field).to.be.a('string');
    expect(Date.parse(call.started_at as string)).to.be.at.most(Date.parse(call.ended_at as string));

    // The provider was asked once, with the API's public callback URL, and every callback was taken at once.
    const [dialled, ...more] = simulated(to);
    expect(more).to.be.empty;
    expect(dialled).to.include({
      from: providers.pool[0],
      answerUrl: `${api.baseUrl}/api/v1/telephony/calls/${placed.id}/answer?agent_id=${agent.id}`,
      ringUrl: `${api.baseUrl}/api/v1${statusPath(placed.id)}`,
      status: 'completed',
    });
    expect(dialled.callbacks.map((c) => [c.status, c.delivered, c.attempts])).to.deep.equal([
      ['ringing', true, 1],
      ['in-progress', true, 1],
      ['completed', true, 1],
    ]);
    expect((await (await api.request('/api/v1/workspace/limits', { headers: owner.auth })).json()).active_calls).to.equal(0);
  });

  describe('calls that never connect (workspace limit 1: a slot not given back would block the next call)', () => {
    let limited: SignedUp;
    let limitedAgentId: string;
    before(async () => {
      limited = await activeOwner(api);
      await Workspace.updateOne({ _id: limited.workspaceId }, { $set: { concurrency_limit: 1 } });
      limitedAgentId = (await agentsClient(api, limited.auth).created({ name: 'Unlucky', call: OPEN_HOURS })).id;
    });

    // [Plivo's CallStatus, the callee, the call status it is in the contract's words]
    const scripts: [string, CalleeScript, string][] = [
      ['no-answer', { kind: 'no-answer', ringSeconds: 10 }, 'no-answer'],
      ['busy', { kind: 'busy' }, 'busy'],
      ['failed', { kind: 'failed' }, 'failed'],
      ['timeout', { kind: 'timeout', ringSeconds: 1 }, 'no-answer'],
    ];
    for (const [word, script, status] of scripts) {
      it(`CallStatus=${word}: the record says ${status}, call.ended "not connected: ${status}" (warning, {plivo}), no charge, the slot is free again`, async () => {
        const balance = await balanceOf(limited.workspaceId);
        const placed = await place(callee(script), limited, limitedAgentId);
        const call = await ended(placed.id, limited);
        expect(call).to.include({ status, cost_paise: null, duration_seconds: null, started_at: null });
        const events = await timeline(placed.id, limited);
        expect(events.map((e) => e.type)).to.deep.equal(['call.queued', 'call.dequeued', 'call.placed', 'call.ended']);
        expect(events[3]).to.deep.include({ message: `not connected: ${status}`, level: 'warning', data: { plivo: status } });
        expect(await balanceOf(limited.workspaceId)).to.equal(balance);

        const limits = await (await api.request('/api/v1/workspace/limits', { headers: limited.auth })).json();
        expect(limits).to.include({ concurrency_limit: 1, active_calls: 0 });
        const keeper = temporal().workflow.getHandle(slotKeeperId(limited.workspaceId));
        const state = await until(
          () => keeper.query(slotsStateQuery),
          (s) => s.active.length === 0,
        );
        expect(state.active).to.be.empty;
        // The slot went back after the step that made the record final, not before.
        const steps = await until(
          () => localStepsOf(temporal(), placed.id),
          (list) => list.includes('releaseSlot'),
        );
        expect(steps.slice(-2)).to.deep.equal(['recordCallStep', 'releaseSlot']);
      });
    }

    it('a connected call gives its slot to the queued call only once its record is closed: the calls stored as live never outnumber the limit', async () => {
      const first = await place(callee({ kind: 'answer', answerAfterSeconds: 1, hangUpAfterSeconds: 20 }), limited, limitedAgentId);
      const next = await place(callee({ kind: 'busy' }), limited, limitedAgentId);
      // What users see through GET /workspace/limits while the slot passes from one call to the other.
      const sampled: number[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) sampled.push((await (await api.request('/api/v1/workspace/limits', { headers: limited.auth })).json()).active_calls);
      })();
      try {
        expect((await ended(first.id, limited)).status).to.equal('completed');
        expect((await ended(next.id, limited)).status).to.equal('busy');
      } finally {
        sampling = false;
        await sampler;
      }
      expect(Math.max(...sampled), 'the most live calls sampled').to.equal(1);
      const steps = await until(
        () => localStepsOf(temporal(), first.id),
        (list) => list.includes('releaseSlot'),
      );
      expect(steps.slice(-2)).to.deep.equal(['closeCall', 'releaseSlot']);
      // The next call was dialled only after the first one's record was closed.
      const firstEnded = (await timeline(first.id, limited)).find((e) => e.type === 'call.ended')!;
      const nextDequeued = (await timeline(next.id, limited)).find((e) => e.type === 'call.dequeued')!;
      expect(Date.parse(nextDequeued.at)).to.be.at.least(Date.parse(firstEnded.at));
    });
  });

  it('a ringing call hung up through POST /calls/{id}/hangup is canceled at the provider (CallStatus=cancel): the record says canceled, "not connected: canceled", the slot is free', async () => {
    const to = callee({ kind: 'no-answer', ringSeconds: 600 });
    const placed = await place(to);
    await until(
      () => Promise.resolve(simulated(to)),
      (calls) => calls[0]?.status === 'ringing',
    );
    const res = await api.request(`/api/v1/calls/${placed.id}/hangup`, { method: 'POST', headers: owner.auth });
    expect(res.status).to.equal(200);
    const call = await ended(placed.id);
    expect(call).to.include({ status: 'canceled', hangup_by: 'Asha Rao', cost_paise: null, started_at: null });
    const events = await timeline(placed.id);
    expect(events.at(-1)).to.deep.include({ type: 'call.ended', message: 'not connected: canceled', data: { plivo: 'canceled' } });
    // Plivo's own word went over the wire, and was taken at once.
    expect(simulated(to)[0]!.callbacks.map((c) => [c.status, c.delivered, c.attempts])).to.deep.equal([
      ['ringing', true, 1],
      ['cancel', true, 1],
    ]);
    expect((await (await api.request('/api/v1/workspace/limits', { headers: owner.auth })).json()).active_calls).to.equal(0);
  });

  it('a live call hung up through POST /calls/{id}/hangup ends completed, by the person, "hung up through the API"', async () => {
    const to = callee({ kind: 'answer', answerAfterSeconds: 1 });
    const placed = await place(to);
    await inProgress(placed.id);
    const res = await api.request(`/api/v1/calls/${placed.id}/hangup`, { method: 'POST', headers: owner.auth });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.include({ status: 'completed', hangup_by: 'Asha Rao', hangup_reason: 'hung up through the API' });
    const events = await until(
      () => timeline(placed.id),
      (list) => list.some((e) => e.type === 'call.completed'),
    );
    expect(events.map((e) => e.type)).to.deep.equal(['call.queued', 'call.dequeued', 'call.placed', 'call.started', 'call.ended', 'call.completed']);
    expect(events[4].message).to.equal('ended by Asha Rao: hung up through the API');
    expect((await getCall(placed.id)).duration_seconds).to.be.a('number');
    // The provider hung up the answered call (the callee would have stayed until the time limit).
    expect(simulated(to)[0].history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'in-progress', 'completed']);
  });

  it('callbacks without a valid signature are 403 and change nothing; repeated statuses change nothing either', async () => {
    const placed = await place(callee({ kind: 'answer', answerAfterSeconds: 1 }));
    await inProgress(placed.id);
    const path = statusPath(placed.id);
    const before = { call: await getCall(placed.id), events: await timeline(placed.id) };
    const [providerCallId] = simulated(placed.to_number as string).map((c) => c.providerCallId);
    const hangup: CallbackParams = {
      CallUUID: providerCallId,
      RequestUUID: providerCallId,
      CallStatus: 'completed',
      Duration: '7',
      HangupCause: 'NORMAL_CLEARING',
    };

    const forged: [string, Promise<ApiResponse>][] = [
      ['no signature', postCallback(path, hangup, { unsigned: true })],
      ['signed with another token', postCallback(path, hangup, { token: 'not-the-auth-token' })],
      ['signed for another call', postCallback(path, hangup, { signedUrl: `${api.baseUrl}/api/v1${statusPath(newId())}` })],
      ['fields changed after signing', postCallback(path, hangup, { signedParams: { ...hangup, CallStatus: 'ringing' } })],
      ['signed over the address reached instead of the public one', postCallback(`/api${path}`, hangup, { signedUrl: `${api.baseUrl}/api${path}` })],
    ];
    for (const [what, response] of forged) {
      const res = await response;
      expect(res.status, what).to.equal(403);
      expect((await res.json()).detail, what).to.match(/not signed by the telephony provider/);
    }

    // Signed repeats of statuses the workflow has seen: taken (200), nothing changes.
    for (const status of ['ringing', 'in-progress']) {
      const res = await postCallback(path, { CallUUID: providerCallId, RequestUUID: providerCallId, CallStatus: status });
      expect(res.status, status).to.equal(200);
      expect(await res.json()).to.deep.equal({});
    }
    // Fields that are not a call status: 400; a field sent twice: 422.
    expect((await postCallback(path, { CallUUID: providerCallId, CallStatus: 'exploded' })).status).to.equal(400);
    const twice = await api.request(`/api/v1${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'CallStatus=completed&CallStatus=busy',
    });
    expect(twice.status).to.equal(422);

    await new Promise((r) => setTimeout(r, 500));
    expect(await getCall(placed.id)).to.deep.equal(before.call);
    expect(await timeline(placed.id)).to.deep.equal(before.events);

    // The provider's own callbacks still work, under the /api alias too (the signature covers the public URL).
    const aliasRes = await postCallback(
      `/api${path}`,
      { CallUUID: providerCallId, RequestUUID: providerCallId, CallStatus: 'ringing' },
      { signedUrl: `${api.baseUrl}/api/v1${path}` },
    );
    expect(aliasRes.status).to.equal(200);
    expect((await api.request(`/api/v1/calls/${placed.id}/hangup`, { method: 'POST', headers: owner.auth })).status).to.equal(200);
    const after = await ended(placed.id);
    expect(after).to.include({ status: 'completed', hangup_by: 'Asha Rao' });
    expect((await timeline(placed.id)).filter((e) => e.type === 'call.started')).to.have.length(1);

    // A final status after the end, and a status of a call that never existed: 200, so the provider stops retrying.
    expect((await postCallback(path, hangup)).status).to.equal(200);
    expect((await postCallback(statusPath(newId()), hangup)).status).to.equal(200);
    expect(await getCall(placed.id)).to.deep.equal(after);
  });

  it('a signed callback is taken once: the same request again is 409 and changes nothing, a new nonce is taken; one that was not taken may come again', async () => {
    const placed = await place(callee({ kind: 'answer', answerAfterSeconds: 1 }));
    await inProgress(placed.id);
    const path = statusPath(placed.id);
    const [providerCallId] = simulated(placed.to_number as string).map((c) => c.providerCallId);
    const ringing: CallbackParams = { CallUUID: providerCallId, RequestUUID: providerCallId, CallStatus: 'ringing' };
    const nonce = randomBytes(10).toString('hex');

    expect((await postCallback(path, ringing, { nonce })).status).to.equal(200);
    const replayed = await postCallback(path, ringing, { nonce });
    expect(replayed.status).to.equal(409);
    expect((await replayed.json()).detail).to.match(/already taken/);
    // Through the other base path too: the claim is on the request, not on the address reached.
    expect((await postCallback(`/api${path}`, ringing, { nonce, signedUrl: `${api.baseUrl}/api/v1${path}` })).status).to.equal(409);
    expect((await postCallback(path, ringing)).status).to.equal(200);

    // A request answered other than 2xx leaves no claim: the provider's retry of it is judged afresh.
    const unknown: CallbackParams = { CallUUID: providerCallId, CallStatus: 'exploded' };
    const failedNonce = randomBytes(10).toString('hex');
    expect((await postCallback(path, unknown, { nonce: failedNonce })).status).to.equal(400);
    expect((await postCallback(path, unknown, { nonce: failedNonce })).status).to.equal(400);
    // An unsigned or forged request claims nothing: the real one with that nonce is still taken.
    const forgedNonce = randomBytes(10).toString('hex');
    expect((await postCallback(path, ringing, { nonce: forgedNonce, token: 'not-the-auth-token' })).status).to.equal(403);
    expect((await postCallback(path, ringing, { nonce: forgedNonce })).status).to.equal(200);

    // The hang-up replayed after the end changes nothing either.
    const hangup: CallbackParams = {
      CallUUID: providerCallId,
      RequestUUID: providerCallId,
      CallStatus: 'completed',
      Duration: '3',
      HangupCause: 'NORMAL_CLEARING',
    };
    const hangupNonce = randomBytes(10).toString('hex');
    expect((await postCallback(path, hangup, { nonce: hangupNonce })).status).to.equal(200);
    const after = await ended(placed.id);
    expect((await postCallback(path, hangup, { nonce: hangupNonce })).status).to.equal(409);
    expect(await getCall(placed.id)).to.deep.equal(after);
  });

  it('with a limit of 1, three answered calls are dialled one at a time in the order they were placed', async () => {
    const queued = await activeOwner(api);
    await Workspace.updateOne({ _id: queued.workspaceId }, { $set: { concurrency_limit: 1 } });
    const agentId = (await agentsClient(api, queued.auth).created({ name: 'One at a time', call: OPEN_HOURS })).id;
    const numbers = [1, 2, 3].map(() => callee({ kind: 'answer', answerAfterSeconds: 1, hangUpAfterSeconds: 30 }));
    const placed: Call[] = [];
    for (const to of numbers) placed.push(await place(to, queued, agentId));
    const calls: Call[] = [];
    for (const call of placed) calls.push(await ended(call.id, queued));

    for (const call of calls) {
      expect(call).to.include({ status: 'completed', hangup_by: 'caller' });
      // 30 simulated seconds: 1.5 s at this time scale, less the stream's arrival.
      expect(call.duration_seconds).to.be.within(0.5, 1.7);
    }
    const dequeuedAt = calls.map((c) => Date.parse(c.dequeued_at as string));
    expect(dequeuedAt).to.deep.equal([...dequeuedAt].sort((a, b) => a - b));
    for (let i = 1; i < calls.length; i++) {
      expect(Date.parse(calls[i].dequeued_at as string), `call ${i + 1} was dialled while call ${i} was live`).to.be.at.least(
        Date.parse(calls[i - 1].ended_at as string),
      );
      // At the provider too: the next call was created only after the previous one had ended.
      const previous = simulated(numbers[i - 1])[0];
      const next = simulated(numbers[i])[0];
      expect(new Date(next.history[0].at).getTime()).to.be.at.least(new Date(previous.history[previous.history.length - 1].at).getTime());
    }
  });
});
