import { expect } from 'chai';
import { LedgerItem } from '../../../db/models/ledger-item';
import type { CallbackParams } from '../../../providers/telephony/callbacks';
import type { SimulatedCall } from '../../../simulators/telephony/simulator';
import type { ApiResponse } from '../../support/api';
import { OPEN_HOURS, useCallStack } from '../../support/call-stack';
import { postProviderCallback } from '../../support/provider-callbacks';
import { until } from '../../support/until';
import { contractCallCost } from '../../support/charges';

const FINAL = ['completed', 'no-answer', 'busy', 'failed', 'canceled'];
const GREETING = 'Ravi here. Leave a message after the beep.';

type Call = Record<string, unknown> & { id: string; status: string; transcript: { role: string; text: string; interrupted: boolean }[] };

/**
 * Voicemail on outbound calls (docs/decisions/0158, 0159), end to end: the API places the call,
 * the worker dials the telephony simulator with answering-machine detection, the simulator's
 * callee answers as a machine (greeting, beep, then it records) or as a person and posts the
 * signed detection verdict to the API, and the media service screens the call (the verdict on
 * the call record, the greeting's words) and hangs up or leaves the message after the beep.
 * Real API, workers, media service, FerretDB, Temporal and simulators.
 */
describe('Voicemail: answering machines on outbound calls', function () {
  this.timeout(120_000);
  const stack = useCallStack({ numberPrefix: '+9196' });
  const { callee, createAgent } = stack;
  const place = (agentId: string, to: string, userData?: Record<string, unknown>) => stack.place<Call>(agentId, to, userData);
  const getCall = (id: string) => stack.getCall<Call>(id);
  const finished = async (id: string) => {
    const done = await stack.finished<Call>(id);
    expect(done.call.status).to.be.oneOf(FINAL);
    return done;
  };
  const simulated = (to: string): SimulatedCall => stack.simulated(to)[0]!;
  const voicemailAgent = (voicemail: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    createAgent({ welcome_message: 'Hello {name}, this is Asha from Acme.', call: { ...OPEN_HOURS, voicemail: { detect: true, ...voicemail } }, ...extra });
  const machineCallbacks = (call: SimulatedCall) => call.callbacks.filter((c) => c.url.endsWith('/machine'));

  it('hang_up: the provider says machine; the agent hangs up at once without its welcome, reason voicemail, charged for the live time only', async () => {
    const agent = await voicemailAgent({ action: 'hang_up' });
    const to = callee({ kind: 'machine', answerAfterSeconds: 1, greeting: GREETING });
    const placed = await place(agent.id, to, { name: 'Ravi' });
    const { call, events } = await finished(placed.id);

    const types = events.map((e) => e.type);
    expect(types).to.deep.equal(['call.queued', 'call.dequeued', 'call.placed', 'call.started', 'call.voicemail', 'call.ended', 'call.completed']);
    const voicemail = events.find((e) => e.type === 'call.voicemail')!;
    expect(voicemail.data).to.deep.equal({ detected_by: 'provider', action: 'hang_up' });
    expect(call).to.include({ status: 'completed', hangup_by: 'agent', hangup_reason: 'voicemail', answered_by: 'machine' });
    expect(events.find((e) => e.type === 'call.ended')!.message).to.equal('ended by agent: voicemail');
    // Quickly: the greeting alone takes over 3 s to say.
    const duration = call.duration_seconds as number;
    expect(duration).to.be.below(3);
    expect(call.cost_paise).to.equal(contractCallCost(duration));
    const items = await LedgerItem.find({ call_id: placed.id }).lean();
    // One `call` item of the live time's price (0 paise for a call shorter than half a second).
    expect(items.map((i) => [i.kind, Math.abs(i.amount_paise)])).to.deep.equal([['call', call.cost_paise]]);

    // The provider was asked for detection, and its signed verdict was taken.
    const dialled = simulated(to);
    expect(dialled.machineDetectionUrl).to.match(new RegExp(`/api/v1/telephony/calls/${placed.id}/machine$`));
    expect(machineCallbacks(dialled).map((c) => c.delivered)).to.deep.equal([true]);
    // The machine recorded nothing: no welcome was wasted on it.
    expect(dialled.heard).to.deep.equal([]);
  });

  it('leave_message: the agent waits for the beep and leaves its message, {variables} filled; the machine records it', async () => {
    const agent = await voicemailAgent({ action: 'leave_message', message: 'Hi {name}, this is Asha from Acme. Please call us back.' });
    const to = callee({ kind: 'machine', answerAfterSeconds: 1, greeting: GREETING });
    const placed = await place(agent.id, to, { name: 'Ravi' });
    const { call, events } = await finished(placed.id);

    expect(events.find((e) => e.type === 'call.voicemail')!.data).to.deep.equal({ detected_by: 'provider', action: 'leave_message' });
    expect(events.some((e) => e.type === 'welcome')).to.equal(false);
    expect(call).to.include({ status: 'completed', hangup_by: 'agent', hangup_reason: 'voicemail', answered_by: 'machine' });
    expect(call.transcript.filter((t) => t.role === 'assistant').map((t) => t.text)).to.deep.equal(['Hi Ravi, this is Asha from Acme. Please call us back.']);

    const dialled = simulated(to);
    expect(dialled.beepedAt).to.be.an.instanceOf(Date);
    const beep = dialled.beepedAt!.getTime();
    // Everything the machine heard came after its beep: the message, whole.
    expect(dialled.heard.filter((h) => h.at.getTime() < beep)).to.deep.equal([]);
    expect(dialled.heard.map((h) => h.text).join(' ')).to.include('Hi Ravi, this is Asha from Acme. Please call us back.');
  });

  it('transcript backstop: the provider says human, but the greeting says "leave a message after the beep": voicemail, detected_by transcript', async () => {
    const agent = await voicemailAgent({ action: 'hang_up' });
    const to = callee({ kind: 'machine', answerAfterSeconds: 1, greeting: 'Sorry I missed you. Please leave a message after the beep.', detection: 'human' });
    const placed = await place(agent.id, to, { name: 'Ravi' });
    const { call, events } = await finished(placed.id);

    expect(events.find((e) => e.type === 'call.voicemail')!.data).to.deep.equal({ detected_by: 'transcript', action: 'hang_up' });
    // The media node's verdict stands over the provider's.
    expect(call).to.include({ hangup_by: 'agent', hangup_reason: 'voicemail', answered_by: 'machine' });
    // The greeting was never answered by the language model.
    expect(events.some((e) => e.type === 'agent.reply' || e.type === 'llm.first_token')).to.equal(false);
  });

  it('transcript backstop without a verdict: the welcome is held, the greeting finds the machine, the message is left after the beep', async () => {
    const agent = await voicemailAgent({ action: 'leave_message', message: 'Please call Acme back.' });
    const to = callee({ kind: 'machine', answerAfterSeconds: 1, greeting: 'Leave a message after the beep.', detection: 'none' });
    const placed = await place(agent.id, to, { name: 'Ravi' });
    const { call, events } = await finished(placed.id);

    expect(events.find((e) => e.type === 'call.voicemail')!.data).to.deep.equal({ detected_by: 'transcript', action: 'leave_message' });
    expect(events.some((e) => e.type === 'welcome')).to.equal(false);
    expect(call).to.include({ hangup_reason: 'voicemail', answered_by: 'machine' });
    const dialled = simulated(to);
    expect(machineCallbacks(dialled)).to.deep.equal([]);
    expect(dialled.heard.filter((h) => h.at.getTime() < dialled.beepedAt!.getTime())).to.deep.equal([]);
    expect(dialled.heard.map((h) => h.text).join(' ')).to.include('Please call Acme back.');
  });

  it('a person answers with detection on: a normal call, answered_by human, no call.voicemail', async () => {
    const agent = await voicemailAgent({ action: 'leave_message', message: 'Please call us back.' });
    const to = callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Yes, speaking.' }, { hangUp: true, afterAgentSilenceMs: 400 }] });
    const placed = await place(agent.id, to, { name: 'Ravi' });
    const { call, events } = await finished(placed.id);

    const types = events.map((e) => e.type);
    expect(types).to.not.include('call.voicemail');
    expect(types).to.include.members(['welcome', 'user.turn', 'agent.reply']);
    expect(call).to.include({ status: 'completed', hangup_by: 'caller', answered_by: 'human' });
    const dialled = simulated(to);
    expect(machineCallbacks(dialled).map((c) => c.delivered)).to.deep.equal([true]);
    const heard = dialled.heard.map((h) => h.text).join(' ');
    expect(heard).to.include('Hello Ravi, this is Asha from Acme.');
    expect(heard).to.include('You said: Yes, speaking.');
  });

  it('an agent without detection: the provider is not asked, answered_by stays null, a machine gets the welcome', async () => {
    const agent = await createAgent({ welcome_message: 'Hello from Acme.', call: OPEN_HOURS });
    expect(agent.call.voicemail).to.deep.equal({ detect: false, action: 'hang_up', message: '' });
    const to = callee({ kind: 'machine', answerAfterSeconds: 1, greeting: 'Hi.', hangUpAfterSeconds: 80 });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);
    expect(events.map((e) => e.type)).to.not.include('call.voicemail');
    expect(call.answered_by).to.equal(null);
    expect(call.hangup_reason).to.not.equal('voicemail');
    expect(simulated(to).machineDetectionUrl).to.equal(null);
    expect(machineCallbacks(simulated(to))).to.deep.equal([]);
  });

  describe('the machine-detection callback route', () => {
    /** A callback as the provider would post it, signed with `token`. */
    const postMachine = (callId: string, params: CallbackParams, options: { token?: string; unsigned?: boolean } = {}): Promise<ApiResponse> => {
      const path = `/api/v1/telephony/calls/${callId}/machine`;
      return postProviderCallback(stack.api, options.token ?? stack.providers.telephony.authToken, path, params, { unsigned: options.unsigned });
    };

    it('checks the signature (403), wants a verdict (400), records the first verdict once: a retried or contrary one changes nothing', async () => {
      const agent = await createAgent({ call: OPEN_HOURS });
      // Rings long enough for the callbacks below; hung up at the end.
      const to = callee({ kind: 'no-answer', ringSeconds: 600 });
      const placed = await place(agent.id, to);
      await until(
        () => getCall(placed.id),
        (c) => c.status === 'ringing',
        30_000,
      );
      const fields = { CallUUID: 'c1', RequestUUID: 'c1', Event: 'MachineDetection', CallStatus: 'in-progress', IfMachine: 'continue' };

      expect((await postMachine(placed.id, { ...fields, Machine: 'true' }, { unsigned: true })).status).to.equal(403);
      expect((await postMachine(placed.id, { ...fields, Machine: 'true' }, { token: 'not-the-auth-token' })).status).to.equal(403);
      expect((await getCall(placed.id)).answered_by).to.equal(null);
      expect((await postMachine(placed.id, { ...fields, Machine: 'maybe' })).status).to.equal(400);

      expect((await postMachine(placed.id, { ...fields, Machine: 'true' })).status).to.equal(200);
      expect((await getCall(placed.id)).answered_by).to.equal('machine');
      // Retried, and a contrary late one: answered 2xx (the provider stops retrying), nothing changes.
      expect((await postMachine(placed.id, { ...fields, Machine: 'true' })).status).to.equal(200);
      expect((await postMachine(placed.id, { ...fields, Machine: 'false' })).status).to.equal(200);
      expect((await getCall(placed.id)).answered_by).to.equal('machine');

      const hangup = await stack.api.request(`/api/v1/calls/${placed.id}/hangup`, { method: 'POST', headers: stack.owner.auth });
      expect(hangup.status).to.equal(200);
    });
  });
});
