import { expect } from 'chai';
import mongoose from 'mongoose';
import { newId } from '../../../db/ids';
import { Call } from '../../../db/models/call';
import { CallRecording } from '../../../media/audio/recording';
import { RECORDING_CHUNK_BYTES, saveRecording } from '../../../domain/calls/recording-store';
import { encodeMulaw } from '../../../providers/audio/mulaw';
import { SpeechDecoder, speakText } from '../../../simulators/simulated-speech';
import { parseWav } from '../../../media/audio/wav';
import type { CalleeScript, SimulatedCall } from '../../../simulators/telephony/simulator';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';

const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };
const SAMPLE_RATE = 8000;

type Call = Record<string, unknown> & { id: string; status: string; duration_seconds: number };
type TimelineEntry = { type: string };
type SimulatedLine = { text: string; at: Date };

/** One stretch of speech on a channel: its text, and where it starts and ends in the file. */
interface Utterance {
  text: string;
  startMs: number;
  endMs: number;
}

/** Silence this long ends an utterance (as the simulated callee hears the agent). */
const UTTERANCE_GAP_MS = 300;
const FRAME_SAMPLES = 160;

/** The channel's speech, decoded 20 ms at a time, split at silences of 300 ms. */
function utterancesOf(channel: Int16Array): Utterance[] {
  const decoder = new SpeechDecoder(SAMPLE_RATE);
  const found: Utterance[] = [];
  let current: Utterance | null = null;
  for (let at = 0; at < channel.length; at += FRAME_SAMPLES) {
    const heard = decoder.push(channel.subarray(at, at + FRAME_SAMPLES));
    const atMs = (at * 1000) / SAMPLE_RATE;
    if (heard.voiced && !current) current = { text: '', startMs: atMs, endMs: atMs };
    if (!current) continue;
    current.text += heard.text;
    if (heard.voiced) current.endMs = atMs + (FRAME_SAMPLES * 1000) / SAMPLE_RATE;
    if (heard.trailingSilenceMs >= UTTERANCE_GAP_MS) {
      if (current.text) found.push(current);
      current = null;
    }
  }
  if (current?.text) found.push(current);
  return found;
}

/**
 * The stereo recording (`call.record`): the media service records both sides of a live call
 * and stores the WAV when the conversation ends; `GET /calls/{id}/recording` streams it.
 * Real API, workers, media service, simulators, FerretDB and Temporal.
 */
describe('Call recordings (GET /calls/{id}/recording)', function () {
  this.timeout(120_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let stranger: SignedUp;

  const callee = (script: CalleeScript): string => {
    const [number] = randomNumbers(1).map((n) => n.replace('+9180', '+9197'));
    providers.telephony.setCallee(number, script);
    return number;
  };
  const createAgent = async (settings: Record<string, unknown>) =>
    agentsClient(api, owner.auth).created({ name: 'Asha', voice: { voice_id: 'meera', language: 'en-IN' }, ...settings });
  const place = async (agentId: string, to: string): Promise<Call> => {
    const res = await api.request(
      '/api/v1/calls',
      withJson('POST', { agent_id: agentId, to_number: to, from_number: await providers.callerFor(owner.workspaceId) }, owner.auth),
    );
    expect(res.status, await res.clone().text()).to.equal(201);
    return res.json();
  };
  /** Waits for call.completed (the recording is saved before the call's end is recorded). */
  const finished = async (id: string): Promise<Call> => {
    const events = await until(
      async () => (await api.request(`/api/v1/calls/${id}/events`, { headers: owner.auth })).json() as Promise<TimelineEntry[]>,
      (list) => list.some((e) => e.type === 'call.completed'),
      90_000,
    );
    expect(events.map((e) => e.type)).to.include('call.completed');
    return (await api.request(`/api/v1/calls/${id}`, { headers: owner.auth })).json();
  };
  const recordingOf = (id: string, who: SignedUp = owner) => api.request(`/api/v1/calls/${id}/recording`, { headers: who.auth });
  const simulated = (to: string): SimulatedCall => providers.telephony.calls().find((c) => c.to === to)!;

  before(async () => {
    providers = await startTestProviders({ timeScale: 0.05 });
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
    owner = await activeOwner(api, { name: 'Asha Rao' });
    await providers.callerFor(owner.workspaceId);
    stranger = await activeOwner(api, { name: 'Someone Else' });
  });
  after(async () => {
    await api?.close();
    await providers?.close();
  });

  it('records the caller on the left and the agent on the right, in step with the call', async () => {
    const welcome = 'Hello, this is Asha from Acme.';
    const agent = await createAgent({ welcome_message: welcome, call: { ...OPEN_HOURS, record: true } });
    const to = callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Where is my order?' }, { say: 'Okay thanks, bye.' }] });
    const placed = await place(agent.id, to);
    const call = await finished(placed.id);
    expect(call.status).to.equal('completed');

    const res = await recordingOf(placed.id);
    expect(res.status, await res.clone().text()).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('audio/wav');
    const body = Buffer.from(await res.arrayBuffer());
    expect(Number(res.headers.get('content-length'))).to.equal(body.length);
    const wav = parseWav(body);
    expect(wav).to.include({ sampleRate: 8000, channels: 2 });

    // The file runs from the agent going live to the end: no longer than the time charged.
    const fileSeconds = wav.left.length / SAMPLE_RATE;
    expect(fileSeconds).to.be.within(call.duration_seconds - 3, call.duration_seconds + 0.5);

    const caller = utterancesOf(wav.left);
    const agentSide = utterancesOf(wav.right);
    expect(caller.map((u) => u.text)).to.deep.equal(['Where is my order?', 'Okay thanks, bye.']);
    const agentText = agentSide.map((u) => u.text).join(' ');
    for (const line of [welcome, 'You said: Where is my order.', 'How can I help further?', 'Thank you for calling.', 'Goodbye!'])
      expect(agentText).to.include(line);
    expect(agentSide[0]!.text).to.equal(welcome);

    // Offsets: the welcome plays at once; the caller speaks after it, the reply follows the caller.
    const [welcomed] = agentSide;
    const reply = agentSide.find((u) => u.text.includes('You said'))!;
    expect(welcomed!.startMs).to.be.within(0, 2_000);
    expect(caller[0]!.startMs).to.be.above(welcomed!.endMs);
    expect(reply.startMs)
      .to.be.above(caller[0]!.endMs)
      .and.below(caller[0]!.endMs + 4_000);
    expect(caller[1]!.startMs).to.be.above(reply.endMs);
    // And as the callee lived it: the gap between hearing the welcome and saying its line is the file's gap.
    const record = simulated(to);
    const gap = (line: SimulatedLine, heard: SimulatedLine) => line.at.getTime() - heard.at.getTime();
    expect(caller[0]!.startMs - welcomed!.startMs).to.be.closeTo(gap(record.said[0]!, record.heard[0]!), 300);
  });

  it('is 404 for a call whose agent does not record, and for another workspace', async () => {
    const agent = await createAgent({ welcome_message: 'Hello.', call: { ...OPEN_HOURS, record: false } });
    const to = callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Bye.' }] });
    const placed = await place(agent.id, to);
    const call = await finished(placed.id);
    expect(call.status).to.equal('completed');
    const none = await recordingOf(placed.id);
    expect(none.status).to.equal(404);
    expect(await none.json()).to.deep.equal({ detail: 'the call has no recording' });

    // A recorded call of the owner's workspace is not found from another workspace.
    const recorder = await createAgent({ welcome_message: 'Hello.', call: { ...OPEN_HOURS, record: true } });
    const recorded = await place(recorder.id, callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Bye.' }] }));
    await finished(recorded.id);
    expect((await recordingOf(recorded.id)).status).to.equal(200);
    const foreign = await recordingOf(recorded.id, stranger);
    expect(foreign.status).to.equal(404);
    expect(await foreign.json()).to.deep.equal({ detail: 'call not found' });
  });

  it('streams a recording of several chunks byte for byte; chunks without their header are not served', async () => {
    const callId = newId();
    const at = new Date();
    await Call.create({
      _id: callId,
      workspace_id: owner.workspaceId,
      agent_id: newId(),
      agent_name: 'Asha',
      direction: 'outbound',
      to_number: '+919800000001',
      from_number: providers.pool[0],
      status: 'completed',
      created_at: at,
      updated_at: at,
    });
    // 40 s of stereo 8 kHz is 1.28 MB: two chunks, the second partial.
    const recording = new CallRecording();
    recording.addCaller(encodeMulaw(speakText('first words', { sampleRate: SAMPLE_RATE })), 0);
    recording.addAgent(encodeMulaw(speakText('last words', { sampleRate: SAMPLE_RATE })), 39_000);
    const wav = recording.toWav();
    expect(wav.length)
      .to.be.above(RECORDING_CHUNK_BYTES)
      .and.below(2 * RECORDING_CHUNK_BYTES);

    // A save cut short before its header: nothing is served.
    const stored = mongoose.connection.collection<{ _id: string } & Record<string, unknown>>('call_recordings');
    await stored.insertOne({ _id: `${callId}:0`, data: wav.subarray(0, RECORDING_CHUNK_BYTES) });
    expect((await recordingOf(callId)).status).to.equal(404);

    // Saved (twice: a retried save changes nothing), then read back whole.
    for (let i = 0; i < 2; i++) await saveRecording({ callId, workspaceId: owner.workspaceId, wav, durationMs: recording.durationMs });
    const header = await stored.findOne({ _id: callId });
    expect(header).to.deep.include({ workspace_id: owner.workspaceId, content_type: 'audio/wav', chunks: 2, bytes: wav.length, duration_ms: 39_000 + 800 });
    const chunks = await Promise.all([0, 1, 2].map((n) => stored.findOne({ _id: `${callId}:${n}` })));
    expect(chunks.map((c) => (c ? (c.data as { length(): number }).length() : null))).to.deep.equal([
      RECORDING_CHUNK_BYTES,
      wav.length - RECORDING_CHUNK_BYTES,
      null,
    ]);
    const res = await recordingOf(callId);
    expect(res.status).to.equal(200);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(wav)).to.equal(true);
    const parsed = parseWav(body);
    expect(utterancesOf(parsed.left).map((u) => [u.text, u.startMs])).to.deep.equal([['first words', 0]]);
    expect(utterancesOf(parsed.right).map((u) => [u.text, u.startMs])).to.deep.equal([['last words', 39_000]]);
  });
});
