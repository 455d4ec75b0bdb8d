import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { DialRefusedError, ProviderUnavailableError } from '../../providers/errors';
import { parseStatusCallback, verifyPlivoCallback, type CallbackParams } from '../../providers/telephony/callbacks';
import { PlivoTelephony } from '../../providers/telephony/plivo';
import { startTelephonySimulator, type CalleeScript, type TelephonySimulator } from '../../simulators/telephony/simulator';
import type { NewCall } from '../../providers/telephony/types';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver';

/** One simulated second is 10 ms here. */
const TIME_SCALE = 0.01;
const FROM = '+918047200001';

/** A callback as the receiver got it, decoded and checked. */
interface Callback {
  /** `ring`, `answer` or `hangup`: the URL it went to. */
  kind: string;
  params: CallbackParams;
  verified: boolean;
}

/** Resolves once `done` holds: the simulator learns a callback's outcome after the receiver has it. */
async function eventually(done: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** Plivo call creation and hang-up against the simulator, and the signed callbacks it posts to a real receiver. */
describe('Plivo calls', () => {
  let simulator: TelephonySimulator;
  let plivo: PlivoTelephony;
  let receiver: WebhookReceiver;

  before(async () => {
    simulator = await startTelephonySimulator({ numbers: [FROM], timeScale: TIME_SCALE, callees: { '+919800000001': { kind: 'busy' } } });
    plivo = new PlivoTelephony({ baseUrl: simulator.url, authId: simulator.authId, authToken: simulator.authToken, timeoutMs: 1_000 });
  });
  after(() => simulator.close());

  beforeEach(async () => {
    // The receiver takes only callbacks signed with the account's token, as the service's route will.
    receiver = await startWebhookReceiver((request) => ({ status: decode(request).verified ? 200 : 403 }));
  });
  afterEach(() => receiver.close());

  function newCall(to: string, fields: Partial<NewCall> = {}): NewCall {
    return {
      from: FROM,
      to,
      answerUrl: `${receiver.url}/calls/answer?call=c1`,
      ringUrl: `${receiver.url}/calls/ring?call=c1`,
      hangupUrl: `${receiver.url}/calls/hangup?call=c1`,
      timeLimitSeconds: 3_600,
      ...fields,
    };
  }

  function decode(request: ReceivedWebhook): Callback {
    const params = Object.fromEntries(new URLSearchParams(request.rawBody));
    const header = (name: string) => request.headers[name.toLowerCase()] as string | undefined;
    const verified = verifyPlivoCallback({
      authToken: simulator.authToken,
      url: `${receiver.url}${request.path}`,
      params,
      nonce: header('X-Plivo-Signature-V3-Nonce'),
      signature: header('X-Plivo-Signature-V3'),
    });
    return { kind: /\/calls\/(\w+)/.exec(request.path)?.[1] ?? '', params, verified };
  }

  async function callbacks(count: number): Promise<Callback[]> {
    const requests = await receiver.waitForRequests(count, 10_000);
    for (const request of requests) expect(request.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    return requests.map(decode);
  }

  /** What the call workflow would get from each callback: [url kind, status, duration, cause]. */
  function updates(received: Callback[]) {
    return received.map((c) => {
      const update = parseStatusCallback(c.params);
      return [c.kind, update?.status, update?.durationSeconds, update?.cause];
    });
  }

  async function placeTo(script: CalleeScript | null, fields: Partial<NewCall> = {}) {
    const to = `+9198${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    if (script) simulator.setCallee(to, script);
    const { providerCallId } = await plivo.createCall(newCall(to, fields));
    return { to, providerCallId, record: () => simulator.calls().find((c) => c.providerCallId === providerCallId)! };
  }

  it('places a call the default callee answers after 1 s and ends 5 s later, with signed ringing, in-progress and completed callbacks', async () => {
    const { to, providerCallId, record } = await placeTo(null);
    const received = await callbacks(3);
    expect(received.every((c) => c.verified)).to.equal(true);
    expect(updates(received)).to.deep.equal([
      ['ring', 'ringing', undefined, undefined],
      ['answer', 'in-progress', undefined, undefined],
      ['hangup', 'completed', 5, 'NORMAL_CLEARING'],
    ]);
    for (const { params } of received) {
      expect(parseStatusCallback(params)?.providerCallId).to.equal(providerCallId);
      expect(params).to.include({ CallUUID: providerCallId, RequestUUID: providerCallId, From: FROM.slice(1), To: to.slice(1), Direction: 'outbound' });
    }
    const call = record();
    expect(call).to.include({
      from: FROM,
      to,
      answerUrl: newCall(to).answerUrl,
      ringUrl: newCall(to).ringUrl,
      hangupUrl: newCall(to).hangupUrl,
      timeLimitSeconds: 3_600,
      status: 'completed',
    });
    expect(call.history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'in-progress', 'completed']);
    // 1 s to answer and 5 s talking are 10 ms and 50 ms at this time scale.
    expect(call.history[3]!.at.getTime() - call.history[2]!.at.getTime()).to.be.at.least(45);
    await eventually(() => record().callbacks.every((c) => c.delivered));
    expect(record().callbacks.map((c) => [c.status, c.attempts, c.delivered])).to.deep.equal([
      ['ringing', 1, true],
      ['in-progress', 1, true],
      ['completed', 1, true],
    ]);
  });

  it('plays the scripts of no-answer, busy and failed callees', async () => {
    const cases: [CalleeScript, unknown[][]][] = [
      [
        { kind: 'no-answer', ringSeconds: 3 },
        [
          ['ring', 'ringing', undefined, undefined],
          ['hangup', 'no-answer', 0, 'NO_ANSWER'],
        ],
      ],
      [{ kind: 'busy' }, [['hangup', 'busy', 0, 'USER_BUSY']]],
      [{ kind: 'failed' }, [['hangup', 'failed', 0, 'UNALLOCATED_NUMBER']]],
    ];
    let seen = 0;
    for (const [script, expected] of cases) {
      const { record } = await placeTo(script);
      const received = (await callbacks(seen + expected.length)).slice(seen);
      seen += expected.length;
      expect(received.every((c) => c.verified)).to.equal(true);
      expect(updates(received), script.kind).to.deep.equal(expected);
      expect(record().history.map((h) => h.status)).to.deep.equal(['queued', ...expected.map((e) => e[1])]);
    }
  });

  it('takes callee scripts from the `callees` option', async () => {
    await plivo.createCall(newCall('+919800000001'));
    expect(updates(await callbacks(1))).to.deep.equal([['hangup', 'busy', 0, 'USER_BUSY']]);
  });

  it('cancels a call that is still ringing', async () => {
    const { providerCallId, record } = await placeTo({ kind: 'answer', answerAfterSeconds: 1_000 });
    await callbacks(1);
    await plivo.hangupCall(providerCallId);
    const received = await callbacks(2);
    expect(updates(received)).to.deep.equal([
      ['ring', 'ringing', undefined, undefined],
      ['hangup', 'canceled', 0, 'ORIGINATOR_CANCEL'],
    ]);
    // Plivo's own word on the wire; the parser maps it to the contract's.
    expect(received[1]!.params.CallStatus).to.equal('cancel');
    expect(record().history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'cancel']);
  });

  it('plays a callee Plivo could not connect in time: CallStatus timeout, taken as no-answer', async () => {
    const { record } = await placeTo({ kind: 'timeout', ringSeconds: 1 });
    const received = await callbacks(2);
    expect(received.every((c) => c.verified)).to.equal(true);
    expect(received.map((c) => c.params.CallStatus)).to.deep.equal(['ringing', 'timeout']);
    expect(updates(received)).to.deep.equal([
      ['ring', 'ringing', undefined, undefined],
      ['hangup', 'no-answer', 0, 'RECOVERY_ON_TIMER_EXPIRE'],
    ]);
    expect(record().history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'timeout']);
  });

  it('hangs up an answered call as completed with the seconds it was answered, and leaves an ended call alone', async () => {
    const { providerCallId, record } = await placeTo({ kind: 'answer', answerAfterSeconds: 1 });
    await callbacks(2);
    await sleep(60); // 6 simulated seconds on the line
    await plivo.hangupCall(providerCallId);
    const [, , hangup] = await callbacks(3);
    const update = parseStatusCallback(hangup!.params)!;
    expect([update.status, update.cause]).to.deep.equal(['completed', 'NORMAL_CLEARING']);
    expect(update.durationSeconds).to.be.within(6, 50);
    await plivo.hangupCall(providerCallId);
    await plivo.hangupCall('no-such-call');
    await sleep(50);
    expect(receiver.received).to.have.length(3);
    expect(record().history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'in-progress', 'completed']);
  });

  it('ends an answered call at its time limit', async () => {
    const { record } = await placeTo({ kind: 'answer', answerAfterSeconds: 1 }, { timeLimitSeconds: 4 });
    const received = await callbacks(3);
    expect(updates(received)[2]).to.deep.equal(['hangup', 'completed', 4, 'ALLOTTED_TIMEOUT']);
    const { history } = record();
    expect(history[3]!.at.getTime() - history[2]!.at.getTime()).to.be.at.least(35);
  });

  it('lets the callee hang up before the time limit', async () => {
    await placeTo({ kind: 'answer', answerAfterSeconds: 1, hangUpAfterSeconds: 2 }, { timeLimitSeconds: 4 });
    expect(updates(await callbacks(3))[2]).to.deep.equal(['hangup', 'completed', 2, 'NORMAL_CLEARING']);
  });

  it('retries a callback the receiver does not take once, then drops it', async () => {
    let refusals = 3;
    receiver.behave(() => ({ status: refusals-- > 0 ? 503 : 200 }));
    const busy = await placeTo({ kind: 'busy' });
    await callbacks(2);
    const failed = await placeTo({ kind: 'failed' });
    await callbacks(4);
    await eventually(() => failed.record().callbacks[0]!.delivered);
    expect(receiver.received).to.have.length(4);
    expect(busy.record().callbacks.map((c) => [c.status, c.attempts, c.delivered])).to.deep.equal([['busy', 2, false]]);
    expect(failed.record().callbacks.map((c) => [c.status, c.attempts, c.delivered])).to.deep.equal([['failed', 2, true]]);
    const [first, retry] = receiver.received.slice(2);
    // 1 s between the two attempts is 10 ms at this time scale.
    expect(retry!.at - first!.at).to.be.at.least(9);
  });

  it('signs callbacks so that another token, another URL, a changed field or a missing header fails verification', async () => {
    await placeTo({ kind: 'busy' });
    const [request] = await receiver.waitForRequests(1, 10_000);
    const { params } = decode(request!);
    const signed = {
      authToken: simulator.authToken,
      url: `${receiver.url}${request!.path}`,
      params,
      nonce: request!.headers['x-plivo-signature-v3-nonce'] as string,
      signature: request!.headers['x-plivo-signature-v3'] as string,
    };
    expect(verifyPlivoCallback(signed)).to.equal(true);
    expect(verifyPlivoCallback({ ...signed, authToken: 'another-token' })).to.equal(false);
    expect(verifyPlivoCallback({ ...signed, url: `${receiver.url}/calls/hangup` })).to.equal(false);
    expect(verifyPlivoCallback({ ...signed, params: { ...params, CallStatus: 'completed' } })).to.equal(false);
    expect(verifyPlivoCallback({ ...signed, params: { ...params, Duration: '600' } })).to.equal(false);
    expect(verifyPlivoCallback({ ...signed, nonce: `${signed.nonce}0` })).to.equal(false);
    expect(verifyPlivoCallback({ ...signed, nonce: undefined })).to.equal(false);
    expect(verifyPlivoCallback({ ...signed, signature: undefined })).to.equal(false);
    expect(verifyPlivoCallback({ ...signed, signature: `${signed.signature.slice(0, -2)}==` })).to.equal(false);
  });

  it('rejects callbacks of a simulator signing with another token', async () => {
    const other = await startTelephonySimulator({ numbers: [FROM], authToken: 'rotated-token', timeScale: TIME_SCALE });
    try {
      const adapter = new PlivoTelephony({ baseUrl: other.url, authId: other.authId, authToken: other.authToken, timeoutMs: 1_000 });
      await adapter.createCall(newCall('+919811111111', { timeLimitSeconds: 1 }));
      // The ring, the answer and the hang-up, each refused with 403, retried once and dropped
      // (the ring goes out on its own, so its retry may come after the answer's first request).
      const received = await callbacks(6);
      expect(received.map((c) => c.verified)).to.deep.equal([false, false, false, false, false, false]);
      expect(received.map((c) => c.params.CallStatus).sort()).to.deep.equal(['completed', 'completed', 'in-progress', 'in-progress', 'ringing', 'ringing']);
    } finally {
      await other.close();
    }
  });

  it('reports wrong credentials, a failing provider and refused connections as the provider being unavailable', async () => {
    const wrongToken = new PlivoTelephony({ baseUrl: simulator.url, authId: simulator.authId, authToken: 'wrong', timeoutMs: 500 });
    const nowhere = new PlivoTelephony({ baseUrl: 'http://127.0.0.1:1', authId: 'a', authToken: 'b', timeoutMs: 500 });
    const attempts: [() => Promise<unknown>, RegExp][] = [
      [() => wrongToken.createCall(newCall('+919822222222')), /answered 401/],
      [() => wrongToken.hangupCall('any'), /answered 401/],
      [() => nowhere.createCall(newCall('+919822222222')), /connection failed/],
      [() => nowhere.hangupCall('any'), /connection failed/],
    ];
    for (const [attempt, reason] of attempts) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ProviderUnavailableError);
      expect((err as Error).message).to.match(reason);
    }
    simulator.mode = 'failing';
    try {
      expect(await plivo.createCall(newCall('+919822222222')).catch((e: unknown) => e)).to.be.instanceOf(ProviderUnavailableError);
    } finally {
      simulator.mode = 'normal';
    }
    expect(simulator.calls().filter((c) => c.to === '+919822222222')).to.deep.equal([]);
  });

  it('reports a call the provider will not place as refused, with the provider’s reason', async () => {
    const cases: [NewCall, RegExp][] = [
      [newCall('+91abc'), /refused the call: to 91abc is not a number Plivo can dial/],
      [{ ...newCall('+919833333333'), from: '+14155550100' }, /refused the call: from 14155550100 is not a number of this account/],
      [newCall('+919833333333', { timeLimitSeconds: 0 }), /refused the call: time_limit must be/],
    ];
    for (const [call, reason] of cases) {
      const err = await plivo.createCall(call).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(DialRefusedError);
      expect((err as Error).message).to.match(reason);
    }
    expect(receiver.received).to.deep.equal([]);
  });
});
