import { expect } from 'chai';
import { DialRefusedError } from '../../providers/errors';
import { parseMachineDetection, verifyPlivoCallback } from '../../providers/telephony/callbacks';
import { PlivoTelephony } from '../../providers/telephony/plivo';
import { startTelephonySimulator, type CalleeScript, type TelephonySimulator } from '../../simulators/telephony/simulator';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver';

const FROM = '+918047200002';

/** Plivo's answering-machine detection (docs/decisions/0158): the adapter asks for it, the simulator posts the signed verdict. */
describe('Plivo answering-machine detection', () => {
  let simulator: TelephonySimulator;
  let plivo: PlivoTelephony;
  let receiver: WebhookReceiver;

  before(async () => {
    simulator = await startTelephonySimulator({ numbers: [FROM], timeScale: 0.01 });
    plivo = new PlivoTelephony({ baseUrl: simulator.url, authId: simulator.authId, authToken: simulator.authToken, timeoutMs: 1_000 });
    receiver = await startWebhookReceiver(() => ({ status: 200 }));
  });
  after(async () => {
    await receiver.close();
    await simulator.close();
  });

  const verified = (request: ReceivedWebhook) =>
    verifyPlivoCallback({
      authToken: simulator.authToken,
      url: `${receiver.url}${request.path}`,
      params: Object.fromEntries(new URLSearchParams(request.rawBody)),
      nonce: request.headers['x-plivo-signature-v3-nonce'] as string | undefined,
      signature: request.headers['x-plivo-signature-v3'] as string | undefined,
    });

  async function place(script: CalleeScript, machineDetection?: { url: string; timeMs: number }) {
    const to = `+9194${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    simulator.setCallee(to, script);
    const { providerCallId } = await plivo.createCall({
      from: FROM,
      to,
      answerUrl: `${receiver.url}/answer/${to}`,
      ringUrl: `${receiver.url}/status/${to}`,
      hangupUrl: `${receiver.url}/status/${to}`,
      timeLimitSeconds: 60,
      machineDetection,
    });
    return { to, providerCallId, record: () => simulator.calls().find((c) => c.providerCallId === providerCallId)! };
  }
  const verdicts = async (to: string, count: number) => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const found = receiver.received.filter((r) => r.path === `/machine/${to}`);
      if (found.length >= count || Date.now() > deadline) return found;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it('asks for it on creation; a machine gets Machine=true and a person Machine=false, signed, at the URL given', async () => {
    const machine = await place(
      { kind: 'machine', answerAfterSeconds: 1, greeting: 'Leave a message.', hangUpAfterSeconds: 100 },
      { url: `${receiver.url}/machine/m`, timeMs: 4_000 },
    );
    expect(machine.record().machineDetectionUrl).to.equal(`${receiver.url}/machine/m`);
    const person = await place({ kind: 'answer', answerAfterSeconds: 1, hangUpAfterSeconds: 100 }, { url: `${receiver.url}/machine/p`, timeMs: 4_000 });
    const [m] = await verdicts('m', 1);
    const [p] = await verdicts('p', 1);
    for (const [request, answeredBy, call] of [
      [m, 'machine', machine],
      [p, 'human', person],
    ] as const) {
      expect(request, answeredBy).to.not.equal(undefined);
      expect(verified(request!)).to.equal(true);
      const params = Object.fromEntries(new URLSearchParams(request!.rawBody));
      expect(params).to.include({ Event: 'MachineDetection', CallStatus: 'in-progress', CallUUID: call.providerCallId });
      expect(parseMachineDetection(params)).to.deep.equal({ answeredBy, providerCallId: call.providerCallId });
    }
  });

  it('without detection asked for, no verdict is posted', async () => {
    const call = await place({ kind: 'machine', answerAfterSeconds: 1, greeting: 'Leave a message.', hangUpAfterSeconds: 30 });
    expect(call.record().machineDetectionUrl).to.equal(null);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(receiver.received.filter((r) => r.path.startsWith('/machine')).map((r) => r.path)).to.not.include(`/machine/${call.to}`);
    expect(call.record().callbacks.map((c) => c.url)).to.not.satisfy((urls: string[]) => urls.some((u) => u.includes('/machine')));
  });

  it('refuses a detection time outside 2000-10000 ms', async () => {
    let error: unknown;
    await place({ kind: 'busy' }, { url: `${receiver.url}/machine/x`, timeMs: 1_000 }).catch((e: unknown) => (error = e));
    expect(error).to.be.an.instanceOf(DialRefusedError);
  });
});
