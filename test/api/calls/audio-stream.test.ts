import { expect } from 'chai';
import { callWorkflowId, providerStatusSignal } from '../../../contracts/calls';
import { newId } from '../../../db/ids';
import { Workspace } from '../../../db/models/workspace';
import { decodeMulaw, encodeMulaw } from '../../../providers/audio/mulaw';
import { SpeechDecoder, speakText, speechDurationMs } from '../../../simulators/simulated-speech';
import type { CallAudioStream } from '../../../media/conversation/audio-stream';
import type { CalleeScript, SimulatedCall } from '../../../simulators/telephony/simulator';
import { streamTokenClaims } from '../../../domain/calls/stream-token';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, TEST_AUTH_CONFIG, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { enterDirectory, openProviderEnd, startMediaNode, type MediaNode } from '../../support/stream-client';
import { createLocal } from '../../support/servers';
import { postProviderCallback } from '../../support/provider-callbacks';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';

const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };
/** Rings and callbacks 20 times faster; the conversation itself runs in real time. */
const TIME_SCALE = 0.05;
const FINAL = ['completed', 'no-answer', 'busy', 'failed', 'canceled'];

type ApiCall = Record<string, unknown> & { id: string; status: string };

/** The caller's audio as our side hears it: utterances split at 300 ms of silence. */
class Listener {
  readonly utterances: string[] = [];
  /** When the caller's voice was first heard since the last `reset`. */
  voicedAt: number | null = null;
  private readonly decoder = new SpeechDecoder(8000);
  private current = '';
  private talking = false;

  constructor(stream: CallAudioStream) {
    stream.onAudio((mulaw) => {
      const heard = this.decoder.push(decodeMulaw(mulaw));
      if (heard.voiced) {
        this.talking = true;
        this.voicedAt ??= Date.now();
      }
      this.current += heard.text;
      if (this.talking && heard.trailingSilenceMs >= 300) {
        this.utterances.push(this.current);
        this.current = '';
        this.talking = false;
      }
    });
  }
}

/** The agent's words as the media node sends them: simulated speech, mu-law at 8 kHz. */
const speech = (text: string): Buffer => encodeMulaw(speakText(text, { sampleRate: 8000 }));

/**
 * The bidirectional audio stream of a phone call, end to end: the worker dials the telephony
 * simulator, whose callee answers; the simulator posts the answer URL, the API answers the
 * Stream XML with a media node from the directory; the simulator opens the WebSocket to the media
 * node and talks and listens through it as its script says. The conversation engine is not
 * here: the test plays the media node's part (a real stream endpoint and registry, entered in
 * the media node directory, whose conversation activity only holds the call).
 */
describe('Calls: the audio stream between the provider and the media node', function () {
  this.timeout(120_000);
  let providers: TestProviders;
  let api: RunningApi;
  let node: MediaNode;
  let leaveDirectory: (() => Promise<void>) | undefined;
  let owner: SignedUp;
  let agentId: string;

  const callee = (script: CalleeScript): string => {
    const [number] = randomNumbers(1).map((n) => n.replace('+9180', '+9197'));
    providers.telephony.setCallee(number, script);
    return number;
  };
  const place = async (to: string): Promise<ApiCall> => {
    const res = await api.request(
      '/api/v1/calls',
      withJson('POST', { agent_id: agentId, to_number: to, from_number: await providers.callerFor(owner.workspaceId) }, owner.auth),
    );
    expect(res.status, await res.clone().text()).to.equal(201);
    return res.json();
  };
  const getCall = async (id: string): Promise<ApiCall> => (await api.request(`/api/v1/calls/${id}`, { headers: owner.auth })).json();
  const eventTypes = async (id: string): Promise<string[]> =>
    ((await (await api.request(`/api/v1/calls/${id}/events`, { headers: owner.auth })).json()) as { type: string }[]).map((e) => e.type);
  const ended = async (id: string): Promise<ApiCall> => {
    const call = await until(
      () => getCall(id),
      (c) => FINAL.includes(c.status),
    );
    expect(call.status, `call ${id} did not end`).to.be.oneOf(FINAL);
    return call;
  };
  const simulated = (to: string): SimulatedCall => providers.telephony.calls().find((c) => c.to === to)!;
  /** The call's stream, which the API's answer sends to this node, the only one in the media node directory. */
  const connect = (callId: string): Promise<CallAudioStream> => node.registry.waitFor(callId, { timeoutMs: 15_000 });
  /** An answer request as the provider signs it (`query`: the answer URL's, as the dial gave it). */
  const postAnswer = (callId: string, providerCallId: string, query = '') => {
    const path = `/api/v1/telephony/calls/${callId}/answer${query}`;
    const params = { CallUUID: providerCallId, RequestUUID: providerCallId, CallStatus: 'in-progress', Event: 'StartApp', Direction: 'outbound' };
    return postProviderCallback(api, providers.telephony.authToken, path, params);
  };

  before(async () => {
    providers = await startTestProviders({ timeScale: TIME_SCALE });
    api = await startApi({ workers: ['calls', 'webhooks'], providers: providers.config });
    node = await startMediaNode({ secret: TEST_AUTH_CONFIG.secret });
    const env = createLocal();
    leaveDirectory = await enterDirectory(node, { connection: env.nativeConnection, namespace: env.namespace ?? 'default' });
    owner = await activeOwner(api, { name: 'Meera Iyer' });
    await providers.callerFor(owner.workspaceId);
    // A call's workflow holds its slot a while after the provider's end: the next test's call must not queue behind it.
    await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { concurrency_limit: 10 } });
    agentId = (await agentsClient(api, owner.auth).created({ name: 'Streamer', call: OPEN_HOURS })).id;
  });
  after(async () => {
    await leaveDirectory?.();
    await node?.close();
    await api?.close();
    await providers?.close();
  });

  it('answers with the Stream XML, the call goes in-progress with its stream connected (a wrong token is 401), and ends with stop', async () => {
    const to = callee({ kind: 'answer', answerAfterSeconds: 1 });
    const placed = await place(to);
    const connecting = connect(placed.id);
    const forged = await openProviderEnd(`${node.url}/telephony/streams/${placed.id}?token=not-a-token`).catch((e: unknown) => e);
    expect(forged).to.have.property('status', 401);
    const stream = await connecting;

    const record = simulated(to);
    expect(record.streamConnected).to.equal(true);
    // The dial names the call's agent in the answer URL, for the media node to read it beside the call (0244).
    expect(record.answerUrl).to.equal(`${api.baseUrl}/api/v1/telephony/calls/${placed.id}/answer?agent_id=${agentId}`);
    expect(record.callbacks.map((c) => [c.status, c.url, c.delivered])).to.deep.equal([
      ['ringing', `${api.baseUrl}/api/v1/telephony/calls/${placed.id}/status`, true],
      ['in-progress', record.answerUrl, true],
    ]);
    expect(stream.streamId).to.be.a('string').and.not.empty;
    const call = await until(
      () => getCall(placed.id),
      (c) => c.status === 'in-progress',
    );
    expect(call.status).to.equal('in-progress');
    expect(
      await until(
        () => eventTypes(placed.id),
        (types) => types.includes('call.started'),
      ),
    ).to.include('call.started');
    // The ring was taken (above) but not relayed: the workflow hears of the answer only (0229).
    const history = await createLocal().client.workflow.getHandle(callWorkflowId(placed.id)).fetchHistory();
    const statusSignals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === providerStatusSignal.name);
    expect(statusSignals, 'providerStatus signals once answered').to.have.length(1);

    // The answer the provider got, asked again (a repeated answer changes nothing else).
    const res = await postAnswer(placed.id, record.providerCallId, new URL(record.answerUrl).search);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/xml/);
    const xml = await res.text();
    const match = /<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio\/x-mulaw;rate=8000">([^<]+)<\/Stream><\/Response>$/.exec(xml);
    expect(match, xml).to.not.equal(null);
    const url = new URL(match![1]!.replace(/&amp;/g, '&'));
    expect(`${url.protocol}//${url.host}${url.pathname}`).to.equal(`${node.url}/telephony/streams/${placed.id}`);
    expect(streamTokenClaims(TEST_AUTH_CONFIG.secret, url.searchParams.get('token')!)).to.deep.equal({ callId: placed.id, agentId });

    // The call ends from our side: the provider stops the stream.
    const closed = new Promise<string>((resolve) => stream.onClose(resolve));
    expect((await api.request(`/api/v1/calls/${placed.id}/hangup`, { method: 'POST', headers: owner.auth })).status).to.equal(200);
    expect(await closed).to.match(/stopped the stream/);
    expect((await ended(placed.id)).status).to.equal('completed');

    // Asked again once the call is over: Hangup at once, no waiting for a media node.
    const startedAt = Date.now();
    const late = await postAnswer(placed.id, record.providerCallId);
    expect(await late.text()).to.match(/<Response><Hangup\/><\/Response>$/);
    expect(Date.now() - startedAt).to.be.below(1_000);
  });

  it('a conversation: caller speech reaches onAudio; agent speech, marks, a clear on barge-in, and the caller hanging up', async () => {
    const welcome = 'Hi there';
    const question = 'shall we start now';
    const to = callee({
      kind: 'answer',
      answerAfterSeconds: 1,
      conversation: [{ say: 'yes' }, { say: 'wait', talkOverAfterMs: 300 }, { pauseMs: 600 }, { hangUp: true }],
    });
    const placed = await place(to);
    const stream = await connect(placed.id);
    const listener = new Listener(stream);
    const played: [string, number][] = [];
    stream.onPlayed((name) => played.push([name, Date.now()]));
    const closed = new Promise<string>((resolve) => stream.onClose(resolve));

    // The welcome plays in real time; its mark comes back once it has.
    const welcomeSentAt = Date.now();
    stream.play(speech(welcome));
    stream.mark('welcome');
    // The caller answers the welcome after 400 ms of silence.
    await until(
      async () => listener.utterances,
      (u) => u.length > 0,
      5_000,
      20,
    );
    expect(listener.utterances).to.deep.equal(['yes']);
    expect(played.map(([name]) => name)).to.deep.equal(['welcome']);
    expect(played[0]![1] - welcomeSentAt).to.be.at.least(speechDurationMs(welcome) - 40);
    expect(simulated(to).heard.map((h) => h.text)).to.deep.equal([welcome]);

    // The agent asks; the caller talks over it 300 ms in; the agent stops (barge-in).
    listener.voicedAt = null;
    stream.play(speech(question));
    stream.mark('question');
    await until(
      async () => listener.voicedAt,
      (at) => at !== null,
      5_000,
      5,
    );
    stream.clear();
    await until(
      async () => listener.utterances,
      (u) => u.length > 1,
      5_000,
      20,
    );
    expect(listener.utterances[1]).to.equal('wait');

    // Then it hangs up: the stream closes from the far end and the call completes.
    expect(await closed).to.match(/stopped the stream/);
    const call = await ended(placed.id);
    expect(call).to.include({ status: 'completed', hangup_by: 'caller' });
    expect(
      played.map(([name]) => name),
      'the cleared mark never plays',
    ).to.deep.equal(['welcome']);

    const record = simulated(to);
    expect(record.said.map((s) => s.text)).to.deep.equal(['yes', 'wait']);
    expect(record.clearedAudio).to.equal(1);
    const [heardWelcome, heardQuestion] = record.heard;
    expect(record.heard).to.have.length(2);
    expect(heardWelcome!.text).to.equal(welcome);
    // Cut mid-sentence: what the caller heard is the start of the question only.
    expect(
      question.startsWith(heardQuestion!.text) && heardQuestion!.text.length > 0 && heardQuestion!.text.length < question.length,
      `heard "${heardQuestion!.text}"`,
    ).to.equal(true);
    // The talk-over began 300 ms into the question.
    const intoQuestion = new Date(record.said[1]!.at).getTime() - new Date(heardQuestion!.at).getTime();
    expect(intoQuestion).to.be.within(250, 700);
    // The caller's "yes" came after the welcome and 400 ms of silence.
    const welcomeEnd = new Date(heardWelcome!.at).getTime() + speechDurationMs(welcome);
    expect(new Date(record.said[0]!.at).getTime() - welcomeEnd).to.be.within(380, 1_000);
    expect(record.history.map((h) => h.status)).to.deep.equal(['queued', 'ringing', 'in-progress', 'completed']);
  });

  /** The provider's side of a call's end: its final status, delivered to our status route. */
  const endedAtProvider = async (to: string): Promise<SimulatedCall> => {
    const record = await until(
      async () => providers.telephony.calls().find((c) => c.to === to),
      (c) => c?.callbacks.some((cb) => cb.status === 'completed' && cb.delivered) === true,
      15_000,
    );
    expect(record?.callbacks, `no call to ${to} ended`).to.not.equal(undefined);
    expect(record!.callbacks.map((c) => [c.status, c.delivered])).to.deep.equal([
      ['ringing', true],
      ['in-progress', true],
      ['completed', true],
    ]);
    return record!;
  };

  it('our side closing the stream leaves the call nothing to do: the provider ends it', async () => {
    const to = callee({ kind: 'answer', answerAfterSeconds: 1 });
    const placed = await place(to);
    const stream = await connect(placed.id);
    await until(
      () => getCall(placed.id),
      (c) => c.status === 'in-progress',
    );
    const closedAt = Date.now();
    stream.close();
    const record = await endedAtProvider(to);
    expect(record.status).to.equal('completed');
    expect(new Date(record.history[3]!.at).getTime() - closedAt).to.be.below(1_000);
  });

  it('an answer with no media node alive is the Hangup XML at once: the provider ends the call, which never went live', async () => {
    // The node leaves the directory (as a stopping node does): no node is alive to take a call's audio.
    await leaveDirectory!();
    leaveDirectory = undefined;
    const to = callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'hello?' }] });
    const placed = await place(to);
    const record = await endedAtProvider(to);
    expect(record.status).to.equal('completed');
    expect(record.streamConnected).to.equal(false);
    expect(record.said).to.deep.equal([]);
    const [answered, hungUp] = record.history.slice(2);
    expect(answered!.status).to.equal('in-progress');
    expect(new Date(hungUp!.at).getTime() - new Date(answered!.at).getTime()).to.be.below(1_000);
    const call = await ended(placed.id);
    expect([call.status, call.hangup_reason]).to.deep.equal(['failed', 'not connected: completed']);
    expect(await eventTypes(placed.id)).to.not.include('call.started');

    // An answer for a call nobody runs: Hangup at once.
    const startedAt = Date.now();
    const res = await postAnswer(newId(), record.providerCallId);
    expect(res.status).to.equal(200);
    expect(await res.text()).to.match(/<Response><Hangup\/><\/Response>$/);
    expect(Date.now() - startedAt).to.be.below(1_000);
  });
});
