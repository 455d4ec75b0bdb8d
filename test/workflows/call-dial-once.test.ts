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
 * ring the callee again. Real store, real Plivo adapter, the telephony simulator.
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

  it('dials once; a second run of the same dial is refused without reaching the provider', async () => {
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
    expect((await Call.findById(callId).lean())?.dial_requested_at).to.be.instanceOf(Date);

    const second = await activities.dialCallOnce(input).then(
      () => null,
      (error: unknown) => error,
    );
    expect(second).to.be.instanceOf(ApplicationFailure);
    expect((second as ApplicationFailure).type).to.equal('DialRefused');
    expect((second as ApplicationFailure).nonRetryable).to.equal(true);
    expect(dialsTo(to), 'the callee is rung once').to.have.length(1);
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
