import { expect } from 'chai';
import { LedgerItem } from '../../../db/models/ledger-item';
import { appendLedgerItem, balanceOf } from '../../../domain/billing/ledger';
import { newId } from '../../../db/ids';
import type { CalleeScript, SimulatedCall } from '../../../simulators/telephony/simulator';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { OPEN_HOURS, useCallStack } from '../../support/call-stack';
import { randomNumbers } from '../../support/providers';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';
import { contractCallCost } from '../../support/charges';

const FINAL = ['completed', 'no-answer', 'busy', 'failed', 'canceled'];

type Call = Record<string, unknown> & { id: string; status: string; transcript: { role: string; text: string; interrupted: boolean }[] };
type TimelineEntry = { type: string; message: string; level: string; latency_ms: number | null; data: Record<string, unknown> };

/**
 * Live conversations end to end: the API places the call, the worker dials the telephony
 * simulator, whose scripted caller answers, connects the audio stream to the media service
 * and talks (text carried as tones); the media service runs the conversation against the
 * recognition, language-model and synthesis simulators. Real API, workers, media service,
 * FerretDB and Temporal.
 */
describe('Live conversations (media service, audio stream, simulators)', function () {
  this.timeout(120_000);
  const stack = useCallStack({ numberPrefix: '+9197' });

  const callee = (script: CalleeScript): string => {
    const [number] = randomNumbers(1).map((n) => n.replace('+9180', '+9197'));
    stack.providers.telephony.setCallee(number, script);
    return number;
  };
  const createAgent = async (settings: Record<string, unknown>, who: SignedUp = stack.owner) =>
    agentsClient(stack.api, who.auth).created({ name: 'Asha', voice: { voice_id: 'meera', language: 'en-IN' }, call: OPEN_HOURS, ...settings });
  const place = async (agentId: string, to: string, userData?: Record<string, unknown>, who: SignedUp = stack.owner): Promise<Call> => {
    const res = await stack.api.request(
      '/api/v1/calls',
      withJson(
        'POST',
        { agent_id: agentId, to_number: to, from_number: await stack.providers.callerFor(who.workspaceId), ...(userData ? { user_data: userData } : {}) },
        who.auth,
      ),
    );
    expect(res.status, await res.clone().text()).to.equal(201);
    return res.json();
  };
  const getCall = async (id: string, who: SignedUp = stack.owner): Promise<Call> =>
    (await stack.api.request(`/api/v1/calls/${id}`, { headers: who.auth })).json();
  const timeline = async (id: string, who: SignedUp = stack.owner): Promise<TimelineEntry[]> =>
    (await stack.api.request(`/api/v1/calls/${id}/events`, { headers: who.auth })).json();
  /** Waits for the call's final record: call.ended, and call.completed for a connected call. */
  const finished = async (id: string, who: SignedUp = stack.owner): Promise<{ call: Call; events: TimelineEntry[] }> => {
    const events = await until(
      () => timeline(id, who),
      (list) => list.some((e) => e.type === 'call.completed'),
      90_000,
    );
    const call = await getCall(id, who);
    expect(call.status).to.be.oneOf(FINAL);
    return { call, events };
  };
  const simulated = (to: string): SimulatedCall => {
    const [call] = stack.providers.telephony.calls().filter((c) => c.to === to);
    return call!;
  };

  it('a typical outbound call: the contract event order, the transcript, the charge and the usage', async () => {
    const agent = await createAgent({
      welcome_message: 'Hello {name}, this is Asha from Acme.',
      system_prompt: 'You help {name} with orders.',
      call: { ...OPEN_HOURS, hangup_message: 'Thank you, goodbye.' },
    });
    const to = callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Where is my order?' }, { say: 'Okay thanks, bye.' }] });
    const placed = await place(agent.id, to, { name: 'Ravi' });
    const { call, events } = await finished(placed.id);

    expect(events.map((e) => e.type)).to.deep.equal([
      'call.queued',
      'call.dequeued',
      'call.placed',
      'call.started',
      'welcome',
      'tts.first_audio',
      'user.turn',
      'llm.first_token',
      'tts.first_audio',
      'agent.reply',
      'user.turn',
      'llm.first_token',
      'tts.first_audio',
      'agent.reply',
      'tool.call',
      'call.ended',
      'call.completed',
    ]);
    const byType = (type: string) => events.filter((e) => e.type === type);
    expect(byType('welcome')[0]!.message).to.equal('Hello Ravi, this is Asha from Acme.');
    expect(byType('tts.first_audio')[0]!.data).to.deep.equal({ welcome: true });
    expect(byType('user.turn').map((e) => [e.message, e.data.after_goodbye])).to.deep.equal([
      ['Where is my order?', false],
      ['Okay thanks, bye.', false],
    ]);
    for (const e of byType('llm.first_token')) {
      expect(e.latency_ms).to.be.a('number');
      expect(e.data.model_ms).to.be.a('number');
    }
    expect(byType('agent.reply')[0]!.message).to.equal('You said: Where is my order. How can I help further?');
    expect(byType('tool.call')[0]!.data).to.deep.equal({ name: 'end_call' });
    const ended = byType('call.ended')[0]!;
    expect(ended.message).to.equal('ended by agent: end_call');
    expect(ended.level).to.equal('info');
    expect(ended.data.duration_seconds).to.equal(call.duration_seconds);
    expect(ended.data.avg_first_audio_ms).to.be.a('number').and.above(0);
    expect(ended.data.agent_spoke).to.equal(true);
    const usage = ended.data.usage as Record<string, number>;
    expect(usage.llm_calls).to.equal(2);
    expect(usage.llm_input_tokens).to.be.above(0);
    expect(usage.llm_output_tokens).to.be.above(0);
    expect(usage.stt_seconds).to.be.above(1);
    expect(usage.tts_characters).to.equal(
      [
        'Hello Ravi, this is Asha from Acme.',
        'You said: Where is my order.',
        'How can I help further?',
        'Thank you for calling.',
        'Goodbye!',
        'Thank you, goodbye.',
      ].join('').length,
    );

    // The caller heard the welcome, both replies and the hang-up message.
    const heard = simulated(to)
      .heard.map((h) => h.text)
      .join(' ');
    for (const line of ['Hello Ravi, this is Asha from Acme.', 'How can I help further?', 'Thank you, goodbye.']) expect(heard).to.include(line);

    expect(call).to.include({ status: 'completed', hangup_by: 'agent', hangup_reason: 'end_call' });
    expect(call.transcript.map((t) => [t.role, t.text, t.interrupted])).to.deep.equal([
      ['assistant', 'Hello Ravi, this is Asha from Acme.', false],
      ['user', 'Where is my order?', false],
      ['assistant', 'You said: Where is my order. How can I help further?', false],
      ['user', 'Okay thanks, bye.', false],
      ['assistant', 'Thank you for calling. Goodbye!', false],
      ['assistant', 'Thank you, goodbye.', false],
    ]);
    // Billing rule 1: ceil(duration * 400 / 60), one `call` ledger item.
    const duration = call.duration_seconds as number;
    expect(duration).to.be.above(3);
    expect(call.cost_paise).to.equal(contractCallCost(duration));
    const items = await LedgerItem.find({ call_id: placed.id }).lean();
    expect(items.map((i) => [i.kind, i.amount_paise])).to.deep.equal([['call', -(call.cost_paise as number)]]);
    // The completed event carries the whole record and its transcript as text.
    const completed = byType('call.completed')[0]!.data.call as Record<string, unknown>;
    expect(completed.transcript_text).to.equal(call.transcript.map((t) => `${t.role}: ${t.text}`).join('\n'));
  });

  it('an agent never heard (no welcome, the callee hangs up at once): call.ended has avg_first_audio_ms 0, a number, and agent_spoke false', async () => {
    const agent = await createAgent({ welcome_message: '' });
    // 40 s of script time: 2 s at this file's time scale, long enough for the stream to arrive.
    const to = callee({ kind: 'answer', answerAfterSeconds: 1, hangUpAfterSeconds: 40 });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);
    expect(call.duration_seconds).to.be.above(0);
    expect(events.filter((e) => e.type === 'tts.first_audio')).to.have.length(0);
    const ended = events.find((e) => e.type === 'call.ended')!;
    expect(ended.data).to.include({ avg_first_audio_ms: 0, agent_spoke: false });
  });

  it('credits ran out: the length is capped at what the balance pays for when the call starts', async () => {
    const poor = await activeOwner(stack.api);
    // 400 paise a minute: 20 paise pay for 3 seconds.
    const balance = await balanceOf(poor.workspaceId);
    await appendLedgerItem({
      workspaceId: poor.workspaceId,
      kind: 'adjustment',
      amountPaise: 20 - balance,
      idempotencyKey: `test:${newId()}`,
      at: new Date(),
      note: 'test: leave 20 paise',
    });
    const agent = await createAgent({ welcome_message: 'Hello.' }, poor);
    const to = callee({ kind: 'answer', answerAfterSeconds: 1 });
    const placed = await place(agent.id, to, undefined, poor);
    const { call, events } = await finished(placed.id, poor);
    expect(call).to.include({ hangup_by: 'system', hangup_reason: 'credits ran out' });
    expect(call.duration_seconds).to.be.within(3, 4.5);
    expect(events.find((e) => e.type === 'call.ended')!.message).to.equal('ended by system: credits ran out');
    expect(await balanceOf(poor.workspaceId)).to.equal(20 - (call.cost_paise as number));
  });

  it('silence: hangup_after_silence_seconds of a quiet caller ends the call, after asking once whether they are there', async () => {
    const agent = await createAgent({
      welcome_message: 'Hello.',
      call: {
        ...OPEN_HOURS,
        hangup_after_silence_seconds: 5,
        check_user_online: true,
        user_online_after_seconds: 3,
        user_online_message: 'Are you still there?',
      },
    });
    const to = callee({ kind: 'answer', answerAfterSeconds: 1 });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);
    expect(events.filter((e) => e.type === 'user.online_check').map((e) => e.message)).to.deep.equal(['Are you still there?']);
    expect(call).to.include({ hangup_by: 'system', hangup_reason: 'silence' });
    expect(simulated(to).heard.map((h) => h.text)).to.include('Are you still there?');
  });

  it('barge-in: the caller talks over a long welcome; playback stops and the transcript keeps what they heard', async () => {
    const welcome = 'Hello, this is a rather long welcome message that goes on and on so that there is time to talk over it.';
    const agent = await createAgent({ welcome_message: welcome, call: { ...OPEN_HOURS, interruption_min_words: 2 } });
    const to = callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Wait wait stop', talkOverAfterMs: 1500 }, { say: 'Goodbye.' }] });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);
    const interrupted = events.find((e) => e.type === 'interrupted')!;
    expect(interrupted, 'an interrupted event').to.exist;
    expect(welcome.startsWith(interrupted.message)).to.equal(true);
    expect(interrupted.message.length).to.be.above(5).and.below(welcome.length);
    expect(call.transcript[0]).to.deep.include({ role: 'assistant', text: interrupted.message, interrupted: true });
    expect(simulated(to).clearedAudio).to.be.at.least(1);
  });
});
