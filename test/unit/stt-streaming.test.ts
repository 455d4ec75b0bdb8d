import { expect } from 'chai';
import { WebSocket } from 'ws';
import { encodeMulaw, mulawSilence } from '../../providers/audio/mulaw';
import { speakText } from '../../simulators/simulated-speech';
import { ProviderRefusedError, ProviderUnavailableError } from '../../providers/errors';
import { EOT_THRESHOLDS, listenUrl, StreamingTranscriber } from '../../providers/stt/deepgram-style';
import { eotSilenceMs, startRecognitionSimulator, type RecognitionSimulator, type SimulatedRecognitionSession } from '../../simulators/stt/simulator';
import type { RecognitionSettings, RecognitionStream, TranscriberProvider } from '../../providers/stt/types';
import { until } from '../support/until';

/** 20 ms of mu-law at 8 kHz, the telephony frame. */
const FRAME_BYTES = 160;

const say = (text: string): Buffer => encodeMulaw(speakText(text, { sampleRate: 8000 }));

/** What the handlers were told, in order. */
class Heard {
  readonly events: { kind: 'interim' | 'turn'; text: string }[] = [];
  /** Each turn's `audioEndSeconds`, in order. */
  readonly audioEnds: (number | null)[] = [];
  /** The turn-boundary calls (early ends, resumptions, ends) in order, each with its turn index. */
  readonly boundaries: string[] = [];
  readonly turns: { text: string; language: string | null; turnIndex: number }[] = [];
  readonly errors: Error[] = [];

  readonly handlers = {
    onInterim: (text: string) => this.events.push({ kind: 'interim', text }),
    onTurnEnd: (turn: { text: string; language: string | null; turnIndex: number; audioEndSeconds?: number | null }) => {
      this.events.push({ kind: 'turn', text: turn.text });
      this.turns.push({ text: turn.text, language: turn.language, turnIndex: turn.turnIndex });
      this.audioEnds.push(turn.audioEndSeconds ?? null);
      this.boundaries.push(`end ${turn.turnIndex} ${turn.text}`);
    },
    onEagerTurnEnd: (turn: { text: string; turnIndex: number }) => this.boundaries.push(`eager ${turn.turnIndex} ${turn.text}`),
    onTurnResumed: (turn: { turnIndex: number }) => this.boundaries.push(`resumed ${turn.turnIndex}`),
    onError: (error: Error) => this.errors.push(error),
  };

  turnTexts(): string[] {
    return this.turns.map((t) => t.text);
  }

  async waitForTurns(count: number, timeoutMs = 5_000): Promise<void> {
    await until(
      async () => this.turns.length,
      (n) => n >= count,
      timeoutMs,
      5,
    );
    expect(this.turnTexts(), `${count} turns`).to.have.length.of.at.least(count);
  }
}

/** Sends `audio` in telephony frames, faster than real time: the simulator measures silence in audio time. */
function feed(stream: RecognitionStream, ...audio: Buffer[]): void {
  const all = Buffer.concat(audio);
  for (let at = 0; at < all.length; at += FRAME_BYTES) stream.sendAudio(all.subarray(at, at + FRAME_BYTES));
}

/** Streaming recognition through the Deepgram-style adapter against the recognition simulator over loopback. */
describe('streaming speech recognition', () => {
  let simulator: RecognitionSimulator;
  let transcriber: StreamingTranscriber;

  before(async () => {
    simulator = await startRecognitionSimulator();
    transcriber = new StreamingTranscriber({ baseUrl: simulator.url, apiKey: simulator.apiKey, connectTimeoutMs: 2_000 });
  });
  after(() => simulator.close());
  afterEach(() => {
    simulator.latencyMs = 0;
    simulator.mode = 'normal';
  });

  function settings(provider: TranscriberProvider, fields: Partial<RecognitionSettings> = {}): RecognitionSettings {
    return {
      provider,
      model: provider === 'provider_a' ? 'flux-general-multi' : 'nova-3',
      language: 'en-IN',
      turnDetection: 'responsive',
      endpointingMs: 300,
      keyterms: [],
      ...fields,
    };
  }

  async function listen(
    fields: RecognitionSettings,
    via: StreamingTranscriber = transcriber,
  ): Promise<{ stream: RecognitionStream; heard: Heard; session: SimulatedRecognitionSession }> {
    const heard = new Heard();
    const stream = await via.open(fields, heard.handlers);
    return { stream, heard, session: simulator.sessions.at(-1)! };
  }

  for (const provider of ['provider_a', 'provider_b'] as const) {
    describe(provider, () => {
      it('hears a sentence as one turn with its exact text', async () => {
        // Over 2 s of speech: provider_b finalizes it in pieces, which the adapter joins.
        const sentence = 'Please book a table for four people tomorrow evening';
        const { stream, heard, session } = await listen(settings(provider));
        feed(stream, mulawSilence(200), say(sentence), mulawSilence(1200));
        await heard.waitForTurns(1);
        await stream.close();
        expect(heard.turnTexts()).to.deep.equal([sentence]);
        expect(session.turns).to.deep.equal([sentence]);
        expect(heard.errors).to.deep.equal([]);
      });

      it('hears two turns separated by silence', async () => {
        const { stream, heard } = await listen(settings(provider));
        feed(stream, say('hello there'), mulawSilence(1500), say('I need help with my order'), mulawSilence(1500));
        await heard.waitForTurns(2);
        await stream.close();
        expect(heard.turnTexts()).to.deep.equal(['hello there', 'I need help with my order']);
      });

      it('reports growing interim text before the turn ends', async () => {
        const sentence = 'what time do you open on sunday';
        const { stream, heard } = await listen(settings(provider));
        feed(stream, say(sentence), mulawSilence(1500));
        await heard.waitForTurns(1);
        await stream.close();
        const end = heard.events.findIndex((e) => e.kind === 'turn');
        const interims = heard.events.slice(0, end).map((e) => e.text);
        // Each character completed is reported at once: every word appears before the turn ends.
        expect(new Set(interims).size).to.be.at.least(sentence.split(' ').length);
        for (let i = 1; i < interims.length; i++)
          expect(interims[i]!.startsWith(interims[i - 1]!), `${interims[i]} grows from ${interims[i - 1]}`).to.equal(true);
        expect(interims[0]!.length).to.be.lessThan(sentence.length);
        expect(interims.at(-1)).to.equal(sentence);
        expect(heard.events[end]).to.deep.equal({ kind: 'turn', text: sentence });
      });

      it('does not report the turn still in progress when closed, and counts the audio seconds', async () => {
        const { stream, heard, session } = await listen(settings(provider));
        const audio = Buffer.concat([say('one moment'), mulawSilence(100)]);
        feed(stream, audio);
        await until(
          async () => session.audioSeconds,
          (s) => s >= audio.length / 8000,
          5_000,
          5,
        );
        const { audioSeconds } = await stream.close();
        expect(audioSeconds).to.be.closeTo(audio.length / 8000, 1e-9);
        expect(session.audioSeconds).to.be.closeTo(audio.length / 8000, 1e-9);
        expect(session.closeRequested).to.equal(true);
        // The provider finalized the turn in progress; the adapter, closing, did not report it.
        expect(session.turns).to.deep.equal(['one moment']);
        expect(heard.turns).to.deep.equal([]);
        expect(heard.errors).to.deep.equal([]);
      });

      it('delays the end of turn by the simulated latency', async () => {
        simulator.latencyMs = 400;
        const { stream, heard } = await listen(settings(provider));
        const sentAt = Date.now();
        feed(stream, say('ok'), mulawSilence(1500));
        await heard.waitForTurns(1);
        const elapsed = Date.now() - sentAt;
        await stream.close();
        expect(heard.turnTexts()).to.deep.equal(['ok']);
        expect(elapsed).to.be.at.least(400);
      });

      it('tells onError once when the provider drops the connection, and still closes', async () => {
        const { stream, heard, session } = await listen(settings(provider));
        feed(stream, say('hello'));
        await until(
          async () => session.audioSeconds,
          (s) => s > 0,
          5_000,
          5,
        );
        session.drop();
        await until(
          async () => heard.errors.length,
          (n) => n > 0,
          5_000,
          5,
        );
        feed(stream, say('anyone there'));
        const { audioSeconds } = await stream.close();
        expect(heard.errors).to.have.length(1);
        expect(heard.errors[0]).to.be.instanceOf(ProviderUnavailableError);
        expect(heard.errors[0]!.message).to.contain('speech recognition');
        expect(audioSeconds).to.be.closeTo(say('hello').length / 8000, 1e-9);
      });

      it('tells onError once, with the reason, when the provider fails the stream', async () => {
        const { stream, heard, session } = await listen(settings(provider));
        feed(stream, say('hello'));
        await until(
          async () => session.audioSeconds,
          (s) => s > 0,
          5_000,
          5,
        );
        session.fail('simulated overload');
        await until(
          async () => heard.errors.length,
          (n) => n > 0,
          5_000,
          5,
        );
        // Whatever else arrives (Flux's close after its Error message) is the same failure.
        await stream.close();
        expect(heard.errors).to.have.length(1);
        expect(heard.errors[0]).to.be.instanceOf(ProviderUnavailableError);
        expect(heard.errors[0]!.message).to.contain('simulated overload');
      });

      it('reports a wrong key as a refusal naming the server setting STT_API_KEY, without asking to retry', async () => {
        const wrongKey = new StreamingTranscriber({ baseUrl: simulator.url, apiKey: 'not-the-key', connectTimeoutMs: 2_000 });
        const sessionsBefore = simulator.sessions.length;
        const error = await wrongKey.open(settings(provider), new Heard().handlers).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).to.be.instanceOf(ProviderRefusedError);
        expect((error as ProviderRefusedError).service).to.equal('speech recognition');
        expect((error as Error).message).to.match(/^the speech recognition provider refused the credentials \(server setting STT_API_KEY\): answered 401/);
        expect((error as Error).message).to.not.contain('retry');
        expect(simulator.sessions).to.have.length(sessionsBefore);
      });

      it('gives up on a provider that does not answer within the connect timeout', async () => {
        simulator.mode = 'hanging';
        const impatient = new StreamingTranscriber({ baseUrl: simulator.url, apiKey: simulator.apiKey, connectTimeoutMs: 200 });
        const startedAt = Date.now();
        const error = await impatient.open(settings(provider), new Heard().handlers).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).to.be.instanceOf(ProviderUnavailableError);
        expect((error as ProviderUnavailableError).reason).to.contain('within 200 ms');
        expect(Date.now() - startedAt).to.be.lessThan(2_000);
      });
    });
  }

  describe('provider_b (/v1/listen)', () => {
    const pausedSpeech = () => [say('I want to'), mulawSilence(600), say('cancel my booking'), mulawSilence(1500)];

    it('splits a turn at a 600 ms pause with endpointing 300', async () => {
      const { stream, heard } = await listen(settings('provider_b', { endpointingMs: 300 }));
      feed(stream, ...pausedSpeech());
      await heard.waitForTurns(2);
      await stream.close();
      expect(heard.turnTexts()).to.deep.equal(['I want to', 'cancel my booking']);
    });

    it('keeps a turn across a 600 ms pause with endpointing 1200', async () => {
      const { stream, heard, session } = await listen(settings('provider_b', { endpointingMs: 1200 }));
      feed(stream, ...pausedSpeech());
      await heard.waitForTurns(1);
      // Metadata comes after every result: once closed, no other turn is on its way.
      await stream.close();
      expect(heard.turnTexts()).to.deep.equal(['I want to cancel my booking']);
      expect(session.endpointingMs).to.equal(1200);
    });

    it('passes model, language, endpointing and keyterms as query parameters', async () => {
      const { stream, session } = await listen(
        settings('provider_b', { model: 'nova-3', language: 'hi', endpointingMs: 450, keyterms: ['Zomato', 'Swiggy One'] }),
      );
      await stream.close();
      expect(session).to.include({ path: '/v1/listen', model: 'nova-3', language: 'hi', endpointingMs: 450, eotThreshold: null });
      expect(session.keyterms).to.deep.equal(['Zomato', 'Swiggy One']);
    });

    it("says where a provider_b turn was decided: the end of its final's window", async () => {
      const { stream, heard } = await listen(settings('provider_b', { language: 'en', endpointingMs: 300 }));
      const words = say('hello there');
      feed(stream, words, mulawSilence(800));
      await heard.waitForTurns(1);
      await stream.close();
      expect(heard.audioEnds[0])
        .to.be.a('number')
        .within(words.length / 8000, words.length / 8000 + 0.5);
    });

    it('reports no language (provider_b is told it)', async () => {
      const { stream, heard } = await listen(settings('provider_b', { language: 'hi' }));
      feed(stream, say('नमस्ते'), mulawSilence(800));
      await heard.waitForTurns(1);
      await stream.close();
      expect(heard.turns).to.deep.equal([{ text: 'नमस्ते', language: null, turnIndex: 0 }]);
    });

    it('sends KeepAlive while no audio flows', async () => {
      const patient = new StreamingTranscriber({ baseUrl: simulator.url, apiKey: simulator.apiKey, connectTimeoutMs: 2_000, keepAliveMs: 50 });
      const { stream, heard, session } = await listen(settings('provider_b'), patient);
      await until(
        async () => session.keepAlives,
        (n) => n >= 2,
        2_000,
        10,
      );
      await stream.close();
      expect(session.keepAlives).to.be.at.least(2);
      expect(heard.errors).to.deep.equal([]);
    });

    it('finalizes a long turn in is_final pieces before speech_final (the simulator)', async () => {
      // What the adapter's joining relies on, read off the wire with a bare client.
      const sentence = 'Please book a table for four people tomorrow evening';
      const socket = new WebSocket(listenUrl(simulator.url, settings('provider_b')), { headers: { Authorization: `Token ${simulator.apiKey}` } });
      const results: { type: string; is_final: boolean; speech_final: boolean; channel: { alternatives: { transcript: string }[] } }[] = [];
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as (typeof results)[number];
        if (message.type === 'Results') results.push(message);
      });
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      const audio = Buffer.concat([say(sentence), mulawSilence(500)]);
      for (let at = 0; at < audio.length; at += FRAME_BYTES) socket.send(audio.subarray(at, at + FRAME_BYTES));
      await until(
        async () => results.some((r) => r.speech_final),
        (done) => done,
        5_000,
        5,
      );
      socket.close();
      const finals = results.filter((r) => r.is_final).map((r) => r.channel.alternatives[0]!.transcript);
      expect(finals.length).to.be.at.least(2);
      expect(finals.join(' ')).to.equal(sentence);
      expect(results.filter((r) => r.speech_final)).to.have.length(1);
    });
  });

  describe('provider_a (/v2/listen)', () => {
    const pausedSpeech = () => [say('I want to'), mulawSilence(600), say('cancel my booking'), mulawSilence(1500)];

    it('maps turn detection to eot_threshold, and the simulator that to a pause', () => {
      expect(EOT_THRESHOLDS).to.deep.equal({ responsive: 0.5, balanced: 0.7, patient: 0.85 });
      expect([0.5, 0.7, 0.85].map(eotSilenceMs)).to.deep.equal([300, 600, 1000]);
    });

    it('splits a turn at a 600 ms pause with responsive turn detection', async () => {
      const { stream, heard, session } = await listen(settings('provider_a', { turnDetection: 'responsive' }));
      feed(stream, ...pausedSpeech());
      await heard.waitForTurns(2);
      await stream.close();
      expect(heard.turnTexts()).to.deep.equal(['I want to', 'cancel my booking']);
      expect(session.eotThreshold).to.equal(0.5);
    });

    it('keeps a turn across a 600 ms pause with patient turn detection', async () => {
      const { stream, heard, session } = await listen(settings('provider_a', { turnDetection: 'patient' }));
      feed(stream, ...pausedSpeech());
      await heard.waitForTurns(1);
      // The simulator closes the socket only after every queued message: once closed, no other turn is on its way.
      await stream.close();
      expect(heard.turnTexts()).to.deep.equal(['I want to cancel my booking']);
      expect(session.eotThreshold).to.equal(0.85);
    });

    it('says where in the audio each turn was decided (audio_window_end), for the media node to time the recognizer by', async () => {
      const { stream, heard } = await listen(settings('provider_a'));
      const words = say('thank you');
      feed(stream, words, mulawSilence(1_000));
      await heard.waitForTurns(1);
      await stream.close();
      // After the words, and after the silence the threshold waits for (300 ms for responsive in the simulator).
      const spokenSeconds = words.length / 8000;
      expect(heard.audioEnds[0])
        .to.be.a('number')
        .within(spokenSeconds + 0.25, spokenSeconds + 0.4);
    });

    it('detects Hindi and English turns', async () => {
      const { stream, heard } = await listen(settings('provider_a'));
      feed(stream, say('नमस्ते, मुझे मदद चाहिए'), mulawSilence(800), say('thank you'), mulawSilence(800));
      await heard.waitForTurns(2);
      await stream.close();
      expect(heard.turns).to.deep.equal([
        { text: 'नमस्ते, मुझे मदद चाहिए', language: 'hi', turnIndex: 0 },
        { text: 'thank you', language: 'en', turnIndex: 1 },
      ]);
    });

    it('passes model, eot_threshold and keyterms as query parameters', async () => {
      const { stream, session } = await listen(settings('provider_a', { model: 'flux-general-multi', turnDetection: 'balanced', keyterms: ['Paytm', 'UPI'] }));
      await stream.close();
      expect(session).to.include({ path: '/v2/listen', model: 'flux-general-multi', eotThreshold: 0.7, language: null, endpointingMs: null });
      expect(session.keyterms).to.deep.equal(['Paytm', 'UPI']);
    });
  });

  describe('provider_a early end of turn (eager_eot_threshold)', () => {
    it('tells the early end, then the end of the same turn with the same text when the caller stays silent', async () => {
      // eager 0.3 -> 200 ms of silence, responsive 0.5 -> 300 ms.
      const { stream, heard, session } = await listen(settings('provider_a', { turnDetection: 'responsive', eagerEndOfTurnThreshold: 0.3 }));
      feed(stream, say('cancel my booking'), mulawSilence(1000), say('thanks'), mulawSilence(1000));
      await heard.waitForTurns(2);
      await stream.close();
      expect(heard.boundaries).to.deep.equal(['eager 0 cancel my booking', 'end 0 cancel my booking', 'eager 1 thanks', 'end 1 thanks']);
      expect(session).to.include({ eotThreshold: 0.5, eagerEotThreshold: 0.3, turnsResumed: 0 });
      expect(session.eagerTurns).to.deep.equal(['cancel my booking', 'thanks']);
    });

    it('tells the resumption when the caller goes on, and a later end of the same turn with all the words', async () => {
      // eager 0.5 -> 300 ms, patient 0.85 -> 1000 ms: the 600 ms pause is an early end, not an end.
      const { stream, heard, session } = await listen(settings('provider_a', { turnDetection: 'patient', eagerEndOfTurnThreshold: 0.5 }));
      feed(stream, say('I want to'), mulawSilence(600), say('cancel my booking'), mulawSilence(1500));
      await heard.waitForTurns(1);
      await stream.close();
      expect(heard.boundaries).to.deep.equal(['eager 0 I want to', 'resumed 0', 'eager 0 I want to cancel my booking', 'end 0 I want to cancel my booking']);
      expect(session.turnsResumed).to.equal(1);
    });

    it('sends the wire events Flux documents: EagerEndOfTurn and TurnResumed of the turn, with its words and confidence', async () => {
      const url = listenUrl(simulator.url, settings('provider_a', { turnDetection: 'patient', eagerEndOfTurnThreshold: 0.5 }));
      const socket = new WebSocket(url, { headers: { Authorization: `Token ${simulator.apiKey}` } });
      const messages: {
        type: string;
        event?: string;
        turn_index?: number;
        transcript?: string;
        words?: { word: string }[];
        end_of_turn_confidence?: number;
      }[] = [];
      socket.on('message', (data) => messages.push(JSON.parse(String(data)) as (typeof messages)[number]));
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      const audio = Buffer.concat([say('I want to'), mulawSilence(600), say('go'), mulawSilence(1200)]);
      for (let at = 0; at < audio.length; at += FRAME_BYTES) socket.send(audio.subarray(at, at + FRAME_BYTES));
      await until(
        async () => messages.some((m) => m.event === 'EndOfTurn'),
        (done) => done,
        5_000,
        5,
      );
      socket.close();
      const boundaries = messages.filter((m) => m.event && !['StartOfTurn', 'Update'].includes(m.event));
      expect(boundaries.map((m) => [m.event, m.turn_index, m.transcript])).to.deep.equal([
        ['EagerEndOfTurn', 0, 'I want to'],
        ['TurnResumed', 0, 'I want to'],
        ['EagerEndOfTurn', 0, 'I want to go'],
        ['EndOfTurn', 0, 'I want to go'],
      ]);
      const [eager, resumed, , end] = boundaries as [(typeof messages)[number], (typeof messages)[number], unknown, (typeof messages)[number]];
      expect(eager.words!.map((w) => w.word)).to.deep.equal(['I', 'want', 'to']);
      expect(eager.end_of_turn_confidence).to.be.at.least(0.5).and.below(0.85);
      expect(resumed.end_of_turn_confidence).to.be.below(0.5);
      expect(end.end_of_turn_confidence).to.be.at.least(0.85);
    });

    it('sends no early end nor resumption without the parameter', async () => {
      const { stream, heard, session } = await listen(settings('provider_a', { turnDetection: 'patient' }));
      feed(stream, say('I want to'), mulawSilence(600), say('cancel my booking'), mulawSilence(1500));
      await heard.waitForTurns(1);
      await stream.close();
      expect(heard.boundaries).to.deep.equal(['end 0 I want to cancel my booking']);
      expect(session).to.include({ eagerEotThreshold: null, turnsResumed: 0 });
      expect(session.eagerTurns).to.deep.equal([]);
      expect(session.query).to.not.have.property('eager_eot_threshold');
    });

    it('delays the early end by the simulated latency, and the end after it not twice', async () => {
      simulator.latencyMs = 300;
      const { stream, heard } = await listen(settings('provider_a', { turnDetection: 'responsive', eagerEndOfTurnThreshold: 0.3 }));
      const sentAt = Date.now();
      feed(stream, say('ok'), mulawSilence(800));
      await heard.waitForTurns(1);
      const elapsed = Date.now() - sentAt;
      await stream.close();
      expect(heard.boundaries).to.deep.equal(['eager 0 ok', 'end 0 ok']);
      expect(elapsed).to.be.at.least(300).and.below(600);
    });

    it('refuses an eager_eot_threshold above eot_threshold or outside 0.3 to 0.9 with 400', async () => {
      for (const query of ['eot_threshold=0.6&eager_eot_threshold=0.7', 'eager_eot_threshold=0.2']) {
        const socket = new WebSocket(`${simulator.url.replace(/^http/, 'ws')}/v2/listen?model=flux-general-en&encoding=mulaw&sample_rate=8000&${query}`, {
          headers: { Authorization: `Token ${simulator.apiKey}` },
        });
        const status = await new Promise<number | undefined>((resolve) => {
          socket.once('unexpected-response', (_request, response) => resolve(response.statusCode));
          socket.once('open', () => resolve(101));
          socket.once('error', () => undefined);
        });
        socket.terminate();
        expect(status, query).to.equal(400);
      }
    });
  });

  it('converts an http base URL to ws and a https one to wss', () => {
    expect(listenUrl('http://127.0.0.1:9000/', settings('provider_b'))).to.match(/^ws:\/\/127\.0\.0\.1:9000\/v1\/listen\?/);
    expect(listenUrl('https://api.example.com', settings('provider_a'))).to.match(/^wss:\/\/api\.example\.com\/v2\/listen\?/);
    const query = new URL(listenUrl('wss://api.example.com', settings('provider_b', { keyterms: ['a b', 'c'] }))).searchParams;
    expect(Object.fromEntries(query)).to.include({ encoding: 'mulaw', sample_rate: '8000', channels: '1', interim_results: 'true', endpointing: '300' });
    expect(query.getAll('keyterm')).to.deep.equal(['a b', 'c']);
  });
});
