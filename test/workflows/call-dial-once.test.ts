import { expect } from 'chai';
import { ApplicationFailure } from '@temporalio/common';
import { createCallTelephonyActivities } from '../../activities/calls/telephony';
import { newId } from '../../db/ids';
import { Call } from '../../db/models/call';
import { PlivoTelephony } from '../../providers/telephony/plivo';
import { randomNumbers, startTestProviders, type TestProviders } from '../support/providers';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * The dial as a local activity (docs/decisions/0162): a local activity runs again when its
 * workflow task is retried, so the dial is claimed on the call record and a second run must not
 * ring the callee again; it takes the first run's outcome instead (0239). Real store, real Plivo
 * adapter, the telephony simulator.
 */
describe('dialCallOnce: the local dial, claimed once on the call record', () => {
  let providers: TestProviders;
  let callbacks: WebhookReceiver;
  let activities: ReturnType<typeof createCallTelephonyActivities>;

  before(async () => {
    providers = await startTestProviders({ poolSize: 1 });
    callbacks = await startWebhookReceiver();
    const { baseUrl, authId, authToken } = providers.config.telephony as { baseUrl: string; authId: string; authToken: string };
    activities = createCallTelephonyActivities({
      telephony: new PlivoTelephony({ baseUrl, authId, authToken, timeoutMs: 5_000 }),
      telephonyCallbackBaseUrl: callbacks.url,
    });
  });
  after(async () => {
    await callbacks.close();
    await providers.close();
  });

  async function queuedCall(to: string) {
    const at = new Date();
    const id = newId();
    await Call.create({
      _id: id,
      workspace_id: newId(),
      agent_id: newId(),
      direction: 'outbound',
      to_number: to,
      from_number: providers.pool[0]!,
      status: 'queued',
      created_at: at,
      updated_at: at,
    });
    return id;
  }
  const dialsTo = (to: string) => providers.telephony.calls().filter((c) => c.to === to);

  it('dials once and records the outcome; a second run of the same dial answers it without reaching the provider', async () => {
    const to = randomNumbers(1)[0]!;
    providers.telephony.setCallee(to, { kind: 'no-answer', ringSeconds: 30 });
    const callId = await queuedCall(to);
    const input = { callId, from: providers.pool[0]!, to, timeLimitSeconds: 60, detectVoicemail: false };

    const before = Date.now();
    const first = await activities.dialCallOnce(input);
    // Not paced here: the dial goes at once.
    if ('retryAt' in first) throw new Error(`the unpaced dial was told to wait until ${first.retryAt}`);
    expect(first.providerCallId).to.be.a('string').and.not.equal('');
    expect(Date.parse(first.placedAt)).to.be.at.least(before - 1);
    expect(dialsTo(to)).to.have.length(1);
    const record = await Call.findById(callId).lean();
    expect(record?.dial_requested_at).to.be.instanceOf(Date);
    expect(record?.provider_call_id).to.equal(first.providerCallId);
    expect(record?.dial_accepted_at?.toISOString()).to.equal(first.placedAt);

    // Its workflow task retried (a worker starved past the task's timeout): the second run takes
    // the first run's outcome from the record (0239), and the call goes on ringing.
    const second = await activities.dialCallOnce(input);
    expect(second).to.deep.equal(first);
    expect(dialsTo(to), 'the callee is rung once').to.have.length(1);
  });

  it("waits for an earlier run's dial still in flight, then takes its outcome, without dialling again (0239)", async () => {
    const to = randomNumbers(1)[0]!;
    const callId = await queuedCall(to);
    // The first run has claimed the dial; the provider has not answered it yet.
    await Call.updateOne({ _id: callId }, { $set: { dial_requested_at: new Date() } });
    const input = { callId, from: providers.pool[0]!, to, timeLimitSeconds: 60, detectVoicemail: false };

    const pending = await activities.dialCallOnce(input);
    if (!('retryAt' in pending)) throw new Error(`a dial without an outcome answered ${JSON.stringify(pending)}`);
    expect(pending.earlierDialPending).to.equal(true);
    expect(Date.parse(pending.retryAt)).to.be.greaterThan(Date.now());

    // The first run's dial is accepted; asked again, the second run answers its outcome.
    const acceptedAt = new Date();
    await Call.updateOne({ _id: callId }, { $set: { provider_call_id: 'earlier-dial', dial_accepted_at: acceptedAt } });
    expect(await activities.dialCallOnce({ ...input, earlierDialPending: true })).to.deep.equal({
      providerCallId: 'earlier-dial',
      placedAt: acceptedAt.toISOString(),
    });
    expect(dialsTo(to), 'the second run never dials').to.have.length(0);
  });

  it("refuses the call when an earlier run's dial left no outcome within the dial's time limit: it was lost mid-dial", async () => {
    const to = randomNumbers(1)[0]!;
    const callId = await queuedCall(to);
    await Call.updateOne({ _id: callId }, { $set: { dial_requested_at: new Date(Date.now() - 26_000) } });
    const input = { callId, from: providers.pool[0]!, to, timeLimitSeconds: 60, detectVoicemail: false };
    for (const earlierDialPending of [false, true]) {
      const error = await activities.dialCallOnce({ ...input, earlierDialPending }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(ApplicationFailure);
      expect((error as ApplicationFailure).type).to.equal('DialRefused');
      expect((error as ApplicationFailure).nonRetryable).to.equal(true);
    }
    expect(dialsTo(to)).to.have.length(0);
  });

  it("answers a refused first run's refusal at once, with its reason, without dialling again (0239)", async () => {
    const to = randomNumbers(1)[0]!;
    providers.telephony.setCallee(to, { kind: 'no-answer', ringSeconds: 30 });
    const callId = await queuedCall(to);
    const failureOf = (promise: Promise<unknown>) =>
      promise.then(
        () => null,
        (e: unknown) => e as ApplicationFailure,
      );
    // The provider refuses the first run's dial (a number the account does not rent).
    const first = await failureOf(activities.dialCallOnce({ callId, from: '+910000000000', to, timeLimitSeconds: 60, detectVoicemail: false }));
    expect(first?.type).to.equal('DialRefused');
    expect((await Call.findById(callId).lean())?.dial_refused_reason).to.equal(first?.message);

    // Run again (its workflow task retried): the same refusal, even though this run's number
    // would be accepted; never "outcome unknown", never a wait.
    const second = await failureOf(activities.dialCallOnce({ callId, from: providers.pool[0]!, to, timeLimitSeconds: 60, detectVoicemail: false }));
    expect(second).to.be.instanceOf(ApplicationFailure);
    expect(second?.nonRetryable).to.equal(true);
    expect(second?.type).to.equal('DialRefused');
    expect(second?.message).to.equal(first?.message);
    expect(dialsTo(to), 'the second run never dials').to.have.length(0);
  });

  it('refuses a call that has no record, without dialling', async () => {
    const to = randomNumbers(1)[0]!;
    const error = await activities.dialCallOnce({ callId: newId(), from: providers.pool[0]!, to, timeLimitSeconds: 60, detectVoicemail: false }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((error as ApplicationFailure | null)?.type).to.equal('DialRefused');
    expect(dialsTo(to)).to.have.length(0);
  });

  it('asks the provider for machine detection when the workflow says the agent screens for voicemail', async () => {
    const [screened, plain] = randomNumbers(2) as [string, string];
    for (const to of [screened, plain]) providers.telephony.setCallee(to, { kind: 'no-answer', ringSeconds: 30 });
    await activities.dialCallOnce({ callId: await queuedCall(screened), from: providers.pool[0]!, to: screened, timeLimitSeconds: 60, detectVoicemail: true });
    await activities.dialCallOnce({ callId: await queuedCall(plain), from: providers.pool[0]!, to: plain, timeLimitSeconds: 60, detectVoicemail: false });
    expect(dialsTo(screened)[0]?.machineDetectionUrl).to.match(/\/telephony\/calls\/[0-9a-f]+\/machine$/);
    expect(dialsTo(plain)[0]?.machineDetectionUrl).to.equal(null);
  });
});
