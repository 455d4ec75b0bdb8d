import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { speechDurationMs } from '../../../simulators/simulated-speech';
import { defaultRespond, type ChatCompletionRequestBody, type SimulatedReply } from '../../../simulators/llm/simulator';
import { messageText } from '../../../simulators/llm/simulated-replies';
import type { CalleeScript, CallerStep, SimulatedCall } from '../../../simulators/telephony/simulator';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { startToolTarget, type ToolTarget } from '../../support/tool-target';
import { until } from '../../support/until';
import { agentsClient, setPlan } from '../agents/helpers';
import { createBase, uploadText } from '../knowledge-bases/fixtures';

/** Calling hours open all day, so that placed calls are dialled at once. */
const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };
/** Long enough to talk over (3.5 s of simulated speech). */
const LONG_WELCOME = 'Hello, this is Asha calling from Acme today.';

type Call = Record<string, unknown> & {
  id: string;
  hangup_by: string;
  hangup_reason: string;
  transcript: { role: string; text: string; interrupted: boolean }[];
};
type TimelineEntry = { type: string; message: string; level: string; latency_ms: number | null; data: Record<string, unknown>; at: string };
type Request = ChatCompletionRequestBody;

/** The question the engine asks after each reply when `hangup_on_prompt` is on. */
const isYesOrNo = (request: Request) => /answer yes or no/i.test(messageText(request.messages.at(-1)!));
/** The caller's last turn: the last user message, or for the yes/no question the last `user:` line of its transcript. */
const lastCallerLine = (request: Request): string => {
  if (isYesOrNo(request)) return [...messageText(request.messages.at(-1)!).matchAll(/^user: (.*)$/gm)].at(-1)?.[1] ?? '';
  const user = [...request.messages].reverse().find((m) => m.role === 'user');
  return user ? messageText(user) : '';
};
const systemMessages = (request: Request) => request.messages.filter((m) => m.role === 'system').map(messageText);
const lastIsTool = (request: Request) => request.messages.at(-1)?.role === 'tool';

/**
 * A terse model, so that calls stay short: `Okay.` to anything, `Bye.` and `end_call` to a
 * goodbye, `No` to the hang-up question.
 */
function terseModel(request: Request): SimulatedReply {
  if (isYesOrNo(request)) return { text: 'No' };
  if (/\bbye\b/i.test(lastCallerLine(request))) return { text: 'Bye.', toolCalls: [{ name: 'end_call', arguments: {} }] };
  return { text: 'Okay.' };
}

/** Says `line` after the welcome, then hangs up once the agent has answered. */
const sayThenHangUp = (line: string): CallerStep[] => [{ say: line }, { hangUp: true, afterAgentSilenceMs: 400 }];

/** An HTTP tool target that answers `{status, eta}` after `delayMs`, noting when each request came and went (or was given up). */
async function startSlowTarget(delayMs: number) {
  const received: { query: Record<string, string>; authorization: string | undefined; at: number; answeredAt: number | null; closedBeforeAnswer: boolean }[] =
    [];
  const server: Server = createServer((req, res) => {
    const entry = {
      query: Object.fromEntries(new URL(req.url ?? '/', 'http://target').searchParams),
      authorization: req.headers.authorization,
      at: Date.now(),
      answeredAt: null as number | null,
      closedBeforeAnswer: false,
    };
    received.push(entry);
    const answer = setTimeout(() => {
      entry.answeredAt = Date.now();
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'shipped', eta: 'Friday' }));
    }, delayMs);
    // The client gave up (an aborted tool request): no answer is written.
    res.on('close', () => {
      if (entry.answeredAt !== null) return;
      entry.closedBeforeAnswer = true;
      clearTimeout(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Every agent setting takes effect in a live call: each test configures agents, places real
 * calls (API, workers, media service, FerretDB, Temporal) to scripted simulated callers, and
 * checks the effect where it shows: what the language model, the recognizer and the
 * synthesizer received, what the caller heard, the call's events. Calls are kept short, and
 * calls of one test run side by side.
 *
 * Elsewhere: test/api/calls/conversation.test.ts (the event order, barge-in with what the
 * caller heard, `{variables}` in the welcome, the silence hang-up) and
 * test/api/calls/place.test.ts (a paused agent takes no calls: POST /calls answers 409).
 */
describe('Agent settings in live calls', function () {
  this.timeout(60_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let target: ToolTarget;

  const createAgent = async (settings: Record<string, unknown> & { call?: object; voice?: object }) =>
    agentsClient(api, owner.auth).created({
      name: 'Asha',
      welcome_message: 'Hi.',
      ...settings,
      voice: { voice_id: 'meera', language: 'en-IN', ...settings.voice },
      call: { ...OPEN_HOURS, ...settings.call },
    });
  const timeline = async (id: string): Promise<TimelineEntry[]> => (await api.request(`/api/v1/calls/${id}/events`, { headers: owner.auth })).json();
  /** Places a call to a simulated callee playing `conversation`, and waits for its final record (call.completed). */
  const call = async (agentId: string, conversation: CallerStep[], userData?: Record<string, unknown>) => {
    const [to] = randomNumbers(1).map((n) => n.replace('+9180', '+9197'));
    providers.telephony.setCallee(to, { kind: 'answer', answerAfterSeconds: 1, conversation } satisfies CalleeScript);
    const res = await api.request(
      '/api/v1/calls',
      withJson(
        'POST',
        { agent_id: agentId, to_number: to, from_number: await providers.callerFor(owner.workspaceId), ...(userData ? { user_data: userData } : {}) },
        owner.auth,
      ),
    );
    expect(res.status, await res.clone().text()).to.equal(201);
    const { id } = await res.json();
    const events = await until(
      () => timeline(id),
      (list) => list.some((e) => e.type === 'call.completed'),
      50_000,
    );
    const record: Call = await (await api.request(`/api/v1/calls/${id}`, { headers: owner.auth })).json();
    const caller = providers.telephony.calls().find((c) => c.to === to) as SimulatedCall;
    return {
      record,
      events,
      ofType: (type: string) => events.filter((e) => e.type === type),
      caller,
      /** Everything the caller heard, one text. */
      heard: caller.heard.map((h) => h.text).join(' '),
      ended: events.find((e) => e.type === 'call.ended')?.message,
    };
  };
  /** What the simulators receive from now on. */
  const fromNow = () => {
    const at = { llm: providers.llm.requests.length, speech: providers.speech.speechRequests.length, sessions: providers.recognition.sessions.length };
    return {
      replies: () => providers.llm.requests.slice(at.llm).filter((r) => !isYesOrNo(r)),
      questions: () => providers.llm.requests.slice(at.llm).filter(isYesOrNo),
      speech: () =>
        providers.speech.speechRequests
          .slice(at.speech)
          .map((request, i) => ({ ...request, totalBytes: providers.speech.speechStreams[at.speech + i]!.totalBytes })),
      sessions: () => providers.recognition.sessions.slice(at.sessions),
    };
  };
  /** From the end of the caller's `line` to the start of the next thing they heard, in ms. */
  const answerGap = (caller: SimulatedCall, line: string): number => {
    const said = caller.said.find((s) => s.text === line)!;
    const endedAt = said.at.getTime() + speechDurationMs(line);
    const next = caller.heard.find((h) => h.at.getTime() > endedAt)!;
    return next.at.getTime() - endedAt;
  };

  before(async () => {
    providers = await startTestProviders({ timeScale: 0.05 });
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
    owner = await activeOwner(api, { name: 'Asha Rao' });
    await providers.callerFor(owner.workspaceId);
    await setPlan(owner.workspaceId, 'scale'); // more agents than the starter plan's 10
    target = await startToolTarget();
  });
  beforeEach(() => {
    providers.llm.respond = terseModel;
  });
  after(async () => {
    if (providers) providers.llm.respond = defaultRespond;
    await target?.close();
    await api?.close();
    await providers?.close();
  });

  it('llm.model, temperature and max_tokens go with every reply; the prompt has its {variables} filled and the voice language; no passages without knowledge bases', async () => {
    const agent = await createAgent({
      llm: { provider: 'openai', model: 'gpt-4.1-mini', temperature: 1.3, max_tokens: 77 },
      system_prompt: 'You are Asha; the caller is {name}.',
      voice: { language: 'ta' },
    });
    const seen = fromNow();
    const { heard, ofType } = await call(agent.id, sayThenHangUp('Hello.'), { name: 'Ravi' });

    const [request, ...more] = seen.replies();
    expect(more, 'one reply').to.have.length(0);
    expect(request).to.include({ model: 'gpt-4.1-mini', temperature: 1.3, max_tokens: 77, stream: true });
    expect(systemMessages(request!)).to.deep.equal([
      `You are Asha; the caller is Ravi.\n\nSpeak Tamil (ta), the caller's language, in short sentences fit to be spoken on a phone call.`,
    ]);
    expect(lastCallerLine(request!)).to.equal('Hello.');
    expect(ofType('agent.reply').map((e) => e.message)).to.deep.equal(['Okay.']);
    expect(heard).to.include('Okay.');
  });

  it('voice.voice_id, model, speed and language go to the synthesizer; speed 1.5 speaks a third faster', async () => {
    const welcome = 'Namaste, this is Asha from Acme.';
    const agent = await createAgent({ welcome_message: welcome, voice: { provider: 'openai', model: 'tts-1', voice_id: 'arjun', language: 'hi', speed: 1.5 } });
    const seen = fromNow();
    const { caller } = await call(agent.id, sayThenHangUp('Hello.'));

    const speech = seen.speech();
    // The welcome is asked for by the worker that dialled (stored for the nodes, 0233), and by the
    // node too when the callee answered before it was stored: once or twice, always in the agent's voice.
    const welcomes = speech.filter((s) => s.input === welcome).length;
    expect(welcomes).to.be.within(1, 2);
    expect(speech.map((s) => [s.input, s.voice, s.model, s.speed, s.lang_code])).to.deep.equal([
      ...Array.from({ length: welcomes }, () => [welcome, 'arjun', 'tts-1', 1.5, 'hi']),
      ['Okay.', 'arjun', 'tts-1', 1.5, 'hi'],
    ]);
    // 24 kHz 16-bit audio: two thirds of what speed 1 makes of the same text.
    expect(speech[0]!.totalBytes).to.equal(Math.round(speechDurationMs(welcome, 1.5) * 24) * 2);
    expect(speech[0]!.totalBytes).to.equal(Math.round((speechDurationMs(welcome, 1) * 24 * 2) / 1.5));
    // The caller answers 400 ms after the welcome ended: it lasted 1.7 s, not 2.6 s.
    const welcomeHeardMs = caller.said[0]!.at.getTime() - caller.heard[0]!.at.getTime() - 400;
    expect(welcomeHeardMs).to.be.within(speechDurationMs(welcome, 1.5) - 100, speechDurationMs(welcome, 1.5) + 250);
    expect(systemMessages(seen.replies()[0]!)[0]).to.match(/^Speak Hindi \(hi\), the caller's language/);
  });

  it('transcriber provider_a: /v2/listen with eot_threshold by turn_detection (responsive 0.5 answers sooner than patient 0.85) and the keyterms', async () => {
    const responsive = await createAgent({ transcriber: { provider: 'provider_a', turn_detection: 'responsive', keyterms: ['Acme', 'Asha'] } });
    const patient = await createAgent({ transcriber: { provider: 'provider_a', turn_detection: 'patient', keyterms: ['Zorbex'] } });
    const seen = fromNow();
    const [quick, slow] = await Promise.all([call(responsive.id, sayThenHangUp('Hello there.')), call(patient.id, sayThenHangUp('Hello there.'))]);

    const sessions = seen.sessions().map((s) => ({ path: s.path, model: s.model, language: s.language, eotThreshold: s.eotThreshold, keyterms: s.keyterms }));
    expect(sessions).to.deep.include.members([
      { path: '/v2/listen', model: 'flux-general-multi', language: null, eotThreshold: 0.5, keyterms: ['Acme', 'Asha'] },
      { path: '/v2/listen', model: 'flux-general-multi', language: null, eotThreshold: 0.85, keyterms: ['Zorbex'] },
    ]);
    expect(quick.ofType('user.turn').map((e) => e.message)).to.deep.equal(['Hello there.']);
    expect(slow.ofType('user.turn').map((e) => e.message)).to.deep.equal(['Hello there.']);
    // The recognizer waits 300 ms of silence at 0.5 and 1000 ms at 0.85 before the turn ends.
    const [quickGap, slowGap] = [answerGap(quick.caller, 'Hello there.'), answerGap(slow.caller, 'Hello there.')];
    const gaps = `responsive ${quickGap} ms, patient ${slowGap} ms`;
    expect(slowGap, gaps).to.be.at.least(950);
    expect(quickGap, gaps)
      .to.be.at.least(250)
      .and.at.most(slowGap - 350);
  });

  it('transcriber provider_b: /v1/listen with the language, endpointing_ms of silence ending the turn, and the keyterms', async () => {
    const quickAgent = await createAgent({ transcriber: { provider: 'provider_b', language: 'en-IN', endpointing_ms: 200, keyterms: ['Acme'] } });
    const slowAgent = await createAgent({ transcriber: { provider: 'provider_b', language: 'ta', endpointing_ms: 1500, keyterms: ['Zorbex', 'Kaveri'] } });
    const seen = fromNow();
    const [quick, slow] = await Promise.all([call(quickAgent.id, sayThenHangUp('Hello there.')), call(slowAgent.id, sayThenHangUp('Hello there.'))]);

    const sessions = seen
      .sessions()
      .map((s) => ({ path: s.path, model: s.model, language: s.language, endpointingMs: s.endpointingMs, eotThreshold: s.eotThreshold, keyterms: s.keyterms }));
    expect(sessions).to.deep.include.members([
      { path: '/v1/listen', model: 'nova-3', language: 'en-IN', endpointingMs: 200, eotThreshold: null, keyterms: ['Acme'] },
      { path: '/v1/listen', model: 'nova-3', language: 'ta', endpointingMs: 1500, eotThreshold: null, keyterms: ['Zorbex', 'Kaveri'] },
    ]);
    const [quickGap, slowGap] = [answerGap(quick.caller, 'Hello there.'), answerGap(slow.caller, 'Hello there.')];
    const gaps = `200 ms: ${quickGap} ms, 1500 ms: ${slowGap} ms`;
    expect(slowGap, gaps).to.be.at.least(1450);
    expect(quickGap, gaps)
      .to.be.at.least(150)
      .and.at.most(slowGap - 800);
  });

  it('allow_interruptions false: talking over the welcome does not stop it; the caller is answered after it', async () => {
    const agent = await createAgent({ welcome_message: LONG_WELCOME, call: { allow_interruptions: false } });
    const { record, ofType, caller, heard } = await call(agent.id, [
      { say: 'Stop please stop now', talkOverAfterMs: 600 },
      { hangUp: true, afterAgentSilenceMs: 400 },
    ]);

    expect(ofType('interrupted')).to.have.length(0);
    expect(caller.clearedAudio).to.equal(0);
    expect(heard).to.include(LONG_WELCOME);
    expect(record.transcript[0]).to.deep.equal({ ...record.transcript[0], role: 'assistant', text: LONG_WELCOME, interrupted: false });
    expect(ofType('user.turn').map((e) => e.message)).to.deep.equal(['Stop please stop now']);
    expect(ofType('agent.reply').map((e) => e.message)).to.deep.equal(['Okay.']);
  });

  it('interruption_min_words 3: two words over the welcome do not stop it, four do (barge-in)', async () => {
    const agent = await createAgent({ welcome_message: LONG_WELCOME, call: { interruption_min_words: 3 } });
    const [two, four] = await Promise.all([
      call(agent.id, [
        { say: 'Hold on', talkOverAfterMs: 600 },
        { hangUp: true, afterAgentSilenceMs: 400 },
      ]),
      call(agent.id, [
        { say: 'Wait wait stop now', talkOverAfterMs: 600 },
        { hangUp: true, afterAgentSilenceMs: 400 },
      ]),
    ]);

    expect(two.ofType('interrupted')).to.have.length(0);
    expect(two.caller.clearedAudio).to.equal(0);
    expect(two.heard).to.include(LONG_WELCOME);

    const [interrupted, ...again] = four.ofType('interrupted');
    expect(again).to.have.length(0);
    expect(LONG_WELCOME.startsWith(interrupted!.message), interrupted!.message).to.equal(true);
    expect(interrupted!.message.length)
      .to.be.above(5)
      .and.below(LONG_WELCOME.length - 10);
    expect(four.caller.clearedAudio).to.be.at.least(1);
    expect(four.heard).not.to.include(LONG_WELCOME);
    expect(four.record.transcript[0]).to.deep.include({ role: 'assistant', text: interrupted!.message, interrupted: true });
  });

  it('hangup_message: said after the model ends the call with end_call, heard whole, then the call ends', async () => {
    const agent = await createAgent({ call: { hangup_message: 'Thanks for calling Acme.' } });
    const { record, ofType, heard, ended } = await call(agent.id, [{ say: 'Okay bye.' }]);

    expect(ofType('tool.call').map((e) => e.data)).to.deep.equal([{ name: 'end_call' }]);
    expect(heard.endsWith('Thanks for calling Acme.'), heard).to.equal(true);
    expect(record.transcript.map((t) => t.text)).to.deep.equal(['Hi.', 'Okay bye.', 'Bye.', 'Thanks for calling Acme.']);
    expect(ended).to.equal('ended by agent: end_call');
  });

  it('hangup_on_prompt: after each reply the model is asked the hangup_prompt; No goes on, Yes emits hangup.prompt and ends the call after the hangup_message', async () => {
    const agent = await createAgent({
      call: { hangup_on_prompt: true, hangup_prompt: 'Has the caller confirmed the delivery slot?', hangup_message: 'Goodbye from Acme.' },
    });
    providers.llm.respond = (request) => (isYesOrNo(request) ? { text: /fine/.test(lastCallerLine(request)) ? 'Yes' : 'No' } : terseModel(request));
    const seen = fromNow();
    const { record, ofType, events, heard, ended } = await call(agent.id, [{ say: 'Not yet.' }, { say: 'The slot is fine.' }]);

    const questions = seen.questions();
    expect(questions).to.have.length(2);
    for (const question of questions) {
      expect(question).to.include({ model: agent.llm.model, temperature: 0 });
      expect(messageText(question.messages.at(-1)!)).to.include('Has the caller confirmed the delivery slot?');
    }
    expect(messageText(questions[0]!.messages.at(-1)!)).to.include('user: Not yet.\nassistant: Okay.');
    const types = events.map((e) => e.type);
    expect(types.filter((t) => ['user.turn', 'agent.reply', 'hangup.prompt', 'call.ended'].includes(t))).to.deep.equal([
      'user.turn',
      'agent.reply',
      'user.turn',
      'agent.reply',
      'hangup.prompt',
      'call.ended',
    ]);
    expect(ofType('tool.call')).to.have.length(0);
    expect(heard.endsWith('Goodbye from Acme.'), heard).to.equal(true);
    expect(record.transcript.at(-1)).to.deep.include({ role: 'assistant', text: 'Goodbye from Acme.' });
    expect(ended).to.equal('ended by agent: hangup prompt');
  });

  it('hangup_interruptible: talking over the goodbye does not stop it when false; when true it is cut and the call goes on', async () => {
    const goodbye = 'Thank you for your time today, goodbye and take care.';
    const settings = { hangup_on_prompt: true, hangup_prompt: 'Is the caller done?', hangup_message: goodbye };
    const firm = await createAgent({ call: { ...settings, hangup_interruptible: false } });
    const soft = await createAgent({ call: { ...settings, hangup_interruptible: true } });
    providers.llm.respond = (request) => (isYesOrNo(request) ? { text: /done/.test(lastCallerLine(request)) ? 'Yes' : 'No' } : terseModel(request));
    // `Okay.` lasts 0.4 s and the goodbye follows it: 1.8 s in, the caller talks over the goodbye.
    const script: CallerStep[] = [{ say: 'I am done.' }, { say: 'Wait one more thing', talkOverAfterMs: 1800 }, { hangUp: true, afterAgentSilenceMs: 400 }];
    const [kept, cut] = await Promise.all([call(firm.id, script), call(soft.id, script)]);

    expect(kept.ofType('hangup.prompt')).to.have.length(1);
    expect(kept.ofType('interrupted')).to.have.length(0);
    expect(kept.caller.clearedAudio).to.equal(0);
    expect(kept.heard.endsWith(goodbye), kept.heard).to.equal(true);
    expect(kept.ofType('user.turn').map((e) => [e.message, e.data.after_goodbye])).to.deep.equal([
      ['I am done.', false],
      ['Wait one more thing', true],
    ]);
    expect(kept.ofType('agent.reply')).to.have.length(1);
    expect(kept.ended).to.equal('ended by agent: hangup prompt');

    expect(cut.ofType('hangup.prompt')).to.have.length(1);
    const [interrupted] = cut.ofType('interrupted');
    expect(interrupted, 'an interrupted event').to.exist;
    expect(goodbye.startsWith(interrupted!.message) && interrupted!.message.length < goodbye.length, interrupted!.message).to.equal(true);
    expect(cut.caller.clearedAudio).to.be.at.least(1);
    expect(cut.ofType('user.turn').map((e) => [e.message, e.data.after_goodbye])).to.deep.equal([
      ['I am done.', false],
      ['Wait one more thing', false],
    ]);
    expect(cut.ofType('agent.reply').map((e) => e.message)).to.deep.equal(['Okay.', 'Okay.']);
    expect(cut.record).to.include({ hangup_by: 'caller' });
  });

  it('check_user_online: after user_online_after_seconds of silence the agent asks user_online_message once, heard by the caller; never when off', async () => {
    const asking = await createAgent({
      call: { check_user_online: true, user_online_after_seconds: 3, user_online_message: 'Still with me?', hangup_after_silence_seconds: 5 },
    });
    const quiet = await createAgent({ call: { check_user_online: false, hangup_after_silence_seconds: 5 } });
    const [asked, notAsked] = await Promise.all([
      // Silent past the check, answers it, then silent again (more than 3 s) until the silence ends the call.
      call(asking.id, [{ pauseMs: 4500 }, { say: 'Yes.' }]),
      call(quiet.id, [{ pauseMs: 4500 }, { say: 'Yes.' }, { hangUp: true, afterAgentSilenceMs: 400 }]),
    ]);

    const checks = asked.ofType('user.online_check');
    expect(checks.map((e) => e.message)).to.deep.equal(['Still with me?']);
    const welcomeEnd = Date.parse(asked.ofType('tts.first_audio')[0]!.at) + speechDurationMs('Hi.');
    expect(Date.parse(checks[0]!.at) - welcomeEnd).to.be.within(2900, 3600);
    expect(asked.caller.heard.map((h) => h.text)).to.include('Still with me?');
    expect(asked.ofType('user.turn').map((e) => e.message)).to.deep.equal(['Yes.']);
    expect(asked.ended).to.equal('ended by system: silence');

    expect(notAsked.ofType('user.online_check')).to.have.length(0);
    expect(notAsked.heard).not.to.include('Still with me?');
  });

  it("knowledge_base_ids: passages retrieved for the caller's turn go to the model", async () => {
    const base = await createBase(api, owner.auth, 'Depot');
    await uploadText(api, owner.auth, base.id, 'depot.txt', 'The Acme depot gate code is 4471. Trucks use the north entrance.');
    const agent = await createAgent({ knowledge_base_ids: [base.id] });
    providers.llm.respond = (request) => ({
      text: systemMessages(request).some((m) => m.includes('gate code is 4471')) ? 'The code is 4471.' : 'I do not know.',
    });
    const seen = fromNow();
    const { heard } = await call(agent.id, sayThenHangUp('What is the gate code?'));

    const [request] = seen.replies();
    const [, passages] = systemMessages(request!);
    expect(passages).to.match(/^Passages from the knowledge base/);
    expect(passages).to.include('The Acme depot gate code is 4471. Trucks use the north entrance.');
    expect(heard).to.include('The code is 4471.');
  });

  it('tools: the call with its arguments, pre_call_message heard while the request runs, tool.result, and the result back to the model', async () => {
    const slow = await startSlowTarget(800);
    try {
      const url = `${slow.origin}/orders`;
      const agent = await createAgent({
        tools: [
          {
            name: 'order_status',
            description: 'Looks up an order.',
            parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
            method: 'GET',
            url,
            headers: { Authorization: 'Bearer crm-live-call' },
            pre_call_message: 'One moment, {name}.',
            timeout_seconds: 5,
          },
        ],
      });
      providers.llm.respond = (request) => {
        if (lastIsTool(request)) return { text: 'It ships Friday.' };
        if (/order/.test(lastCallerLine(request))) return { toolCalls: [{ name: 'order_status', arguments: { order_id: 'A-123' } }] };
        return terseModel(request);
      };
      const seen = fromNow();
      const { events, ofType, caller, heard } = await call(agent.id, [{ say: 'Where is my order?' }, { hangUp: true, afterAgentSilenceMs: 500 }], {
        name: 'Ravi',
      });

      expect(slow.received.map((r) => r.query)).to.deep.equal([{ order_id: 'A-123' }]);
      // The header value saved sealed (docs/decisions/0196) reaches the target in the clear.
      expect(slow.received[0]!.authorization).to.equal('Bearer crm-live-call');
      expect(ofType('tool.call').map((e) => [e.level, e.data])).to.deep.equal([['info', { name: 'order_status', args: { order_id: 'A-123' }, url }]]);
      const result = JSON.stringify({ status: 'shipped', eta: 'Friday' }, null, 2);
      const [toolResult] = ofType('tool.result');
      expect(toolResult).to.deep.include({ level: 'info', data: { name: 'order_status', status: 200, result } });
      expect(toolResult!.latency_ms).to.be.within(800, 1500);
      // The pre-call message started once the request went out, before its answer.
      const preCall = caller.heard.find((h) => h.text.startsWith('One moment, Ravi.'))!;
      expect(preCall, heard).to.exist;
      expect(preCall.at.getTime()).to.be.within(slow.received[0]!.at - 100, slow.received[0]!.answeredAt!);
      expect(heard).to.include('It ships Friday.');
      // It was the reply's first audio; the answer followed the result.
      const order = events.map((e) => e.type).filter((t) => ['tts.first_audio', 'tool.call', 'tool.result', 'agent.reply'].includes(t));
      expect(order).to.deep.equal(['tts.first_audio', 'tool.call', 'tts.first_audio', 'tool.result', 'agent.reply']);
      const [, answering] = seen.replies();
      expect(answering!.messages.at(-1)).to.deep.include({ role: 'tool', content: result });
    } finally {
      await slow.close();
    }
  });

  it('tools: timeout_seconds abandons a silent target (status 0, warning, about 1 s); a 500 is a warning; POST sends the arguments as JSON', async () => {
    const agent = await createAgent({
      tools: [
        {
          name: 'slow_lookup',
          description: 'Looks something up.',
          parameters: { type: 'object', properties: { q: { type: 'string' } } },
          method: 'GET',
          url: `${target.origin}/silent`,
          timeout_seconds: 1,
        },
        {
          name: 'save_note',
          description: 'Saves a note.',
          parameters: { type: 'object', properties: { note: { type: 'string' } } },
          method: 'POST',
          url: `${target.origin}/status/500`,
        },
      ],
    });
    providers.llm.respond = (request) => {
      if (lastIsTool(request)) return { text: 'Sorry, that failed.' };
      if (/check/i.test(lastCallerLine(request)))
        return {
          toolCalls: [
            { name: 'slow_lookup', arguments: { q: 'x' } },
            { name: 'save_note', arguments: { note: 'hello' } },
          ],
        };
      return terseModel(request);
    };
    const before = target.received.length;
    const seen = fromNow();
    const { ofType, heard } = await call(agent.id, sayThenHangUp('Check it please.'));

    const received = target.received.slice(before);
    expect(received.map((r) => [r.method, r.path, r.query, r.body])).to.deep.equal([
      ['GET', '/silent', { q: 'x' }, ''],
      ['POST', '/status/500', {}, '{"note":"hello"}'],
    ]);
    const [timedOut, failed] = ofType('tool.result');
    expect(timedOut).to.deep.include({ level: 'warning' });
    expect(timedOut!.data).to.include({ name: 'slow_lookup', status: 0 });
    expect(timedOut!.data.result).to.match(/did not answer/);
    expect(timedOut!.latency_ms).to.be.within(950, 1600);
    expect(failed).to.deep.include({
      level: 'warning',
      data: { name: 'save_note', status: 500, result: JSON.stringify({ error: 'boom', status: 500 }, null, 2) },
    });
    const [, answering] = seen.replies();
    expect(answering!.messages.filter((m) => m.role === 'tool').map(messageText)).to.deep.equal([timedOut!.data.result, failed!.data.result]);
    expect(heard).to.include('Sorry, that failed.');
  });

  it('tools: the tool calls of a reply the caller talked over are never run, and one under way is aborted (over its text, or over a pre-call message: the next call)', async () => {
    const text = 'Let me look that up for you right now, one moment please.';
    const slow = await startSlowTarget(2500); // still running when the caller talks over the pre-call message
    try {
      const echo = { type: 'object', properties: { order_id: { type: 'string' } } };
      const agent = await createAgent({
        tools: [
          { name: 'order_status', description: 'Looks up an order.', parameters: echo, method: 'GET', url: `${target.origin}/echo` },
          {
            name: 'first_step',
            description: 'Does the first step.',
            parameters: echo,
            method: 'GET',
            url: `${slow.origin}/first`,
            pre_call_message: 'Checking that now, please hold the line.',
          },
        ],
      });
      providers.llm.respond = (request) => {
        const line = lastCallerLine(request);
        if (/order/.test(line)) return { text, toolCalls: [{ name: 'order_status', arguments: { order_id: 'B-9' } }] };
        if (/both/.test(line))
          return {
            toolCalls: [
              { name: 'first_step', arguments: { order_id: 'C-1' } },
              { name: 'order_status', arguments: { order_id: 'C-2' } },
            ],
          };
        return terseModel(request);
      };
      const before = target.received.length;
      const seen = fromNow();
      const talkOver: CallerStep[] = [
        { say: 'Stop stop wait', talkOverAfterMs: 1000 },
        { hangUp: true, afterAgentSilenceMs: 400 },
      ];
      const [overText, overPreCall] = await Promise.all([
        call(agent.id, [{ say: 'Where is my order?' }, ...talkOver]),
        call(agent.id, [{ say: 'Do both steps.' }, ...talkOver]),
      ]);

      // Nothing of the reply whose text was talked over ran.
      const [interrupted] = overText.ofType('interrupted');
      expect(interrupted, 'an interrupted event').to.exist;
      expect(text.startsWith(interrupted!.message) && interrupted!.message.length < text.length, interrupted!.message).to.equal(true);
      expect(overText.caller.clearedAudio).to.be.at.least(1);
      expect(overText.ofType('tool.call')).to.have.length(0);
      expect(overText.ofType('tool.result')).to.have.length(0);
      expect(target.received.slice(before)).to.deep.equal([]);
      // Its model hears what the caller heard, and of no call that never ran.
      const afterText = seen.replies().find((r) => lastCallerLine(r) === 'Stop stop wait' && r.messages.some((m) => messageText(m) === 'Where is my order?'))!;
      expect(afterText.messages.some((m) => m.role === 'tool' || (m.tool_calls?.length ?? 0) > 0)).to.equal(false);
      expect(afterText.messages.slice(-2).map((m) => [m.role, messageText(m)])).to.deep.equal([
        ['assistant', `${interrupted!.message} ...`],
        ['user', 'Stop stop wait'],
      ]);

      // Talked over during the first tool's pre-call message: that request was under way and is
      // aborted (its tool.result says canceled, the target never got to answer), the second call
      // never runs, and the model gets an answer for each call.
      const [cut] = overPreCall.ofType('interrupted');
      expect(cut, 'an interrupted event').to.exist;
      expect(overPreCall.ofType('tool.call').map((e) => e.data.name)).to.deep.equal(['first_step']);
      const canceled = 'canceled: the caller interrupted before the answer arrived';
      expect(overPreCall.ofType('tool.result').map((e) => [e.message, e.level, e.data])).to.deep.equal([
        ['first_step: canceled', 'warning', { name: 'first_step', status: 0, result: canceled }],
      ]);
      expect(overPreCall.ofType('tool.result')[0]!.latency_ms).to.be.below(2500);
      expect(slow.received.map((r) => r.query)).to.deep.equal([{ order_id: 'C-1' }]);
      expect(slow.received[0]!.closedBeforeAnswer).to.equal(true);
      const afterPreCall = seen.replies().find((r) => lastCallerLine(r) === 'Stop stop wait' && r.messages.some((m) => messageText(m) === 'Do both steps.'))!;
      const asked = afterPreCall.messages.findIndex((m) => (m.tool_calls?.length ?? 0) > 0);
      expect(afterPreCall.messages.slice(asked).map((m) => [m.role, m.role === 'tool' ? messageText(m) : (m.content ?? null)])).to.deep.equal([
        ['assistant', `${cut!.message} ...`],
        ['tool', canceled],
        ['tool', 'not run: the caller interrupted'],
        ['user', 'Stop stop wait'],
      ]);
    } finally {
      await slow.close();
    }
  });
});
