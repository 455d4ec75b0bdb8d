import { synthesizeMulaw } from '../../providers/tts/telephone-audio';
import { sleep } from './helpers';
import { PlaybackTimeline } from './playback';
import type { GreetingAudio } from './greetings';
import { noUsage, type ConversationState, type Reply } from './state';
import type { ConversationDeps, ConversationOptions } from './types';

/**
 * How long the end waits, past the playback timeline, for the far end to confirm it played
 * the last words (a mark): audio that reached it late would otherwise be cut by the hang-up.
 */
export const FAR_END_PLAYED_WAIT_MS = 3_000;

/**
 * The agent's voice: starts its replies (`start`), speaks their sentences in order (`queue`:
 * each synthesized as a stream), puts their audio on the playback timeline as it arrives
 * (`release`, the one place audio goes to the caller), records what was said (`end`), and
 * waits for the far end to have played it (`untilPlayed`, `untilFarEndPlayed`).
 */
export class AgentSpeech {
  readonly playback = new PlaybackTimeline();
  /** The first-audio latencies of the replies to the caller (the welcome left out). */
  readonly firstAudioLatencies: number[] = [];
  /** Each spoken turn's voice-to-voice time on this node (./turn-timing.ts, docs/decisions/0220). */
  readonly voiceToVoice: number[] = [];
  /** Marks the far end has reported played, and how many were sent. */
  private readonly playedMarks = new Set<string>();
  private marksSent = 0;

  constructor(
    private readonly options: ConversationOptions,
    private readonly deps: ConversationDeps,
    private readonly state: ConversationState,
  ) {}

  /** The far end reported mark `name` played. */
  played(name: string): void {
    this.playedMarks.add(name);
  }

  /**
   * As untilPlayed, then until the far end confirms it played everything queued (a mark),
   * for at most FAR_END_PLAYED_WAIT_MS: the timeline counts from when audio was queued here,
   * and audio delayed on its way would be cut by the hang-up that follows.
   */
  async untilFarEndPlayed(reply: Reply | null): Promise<void> {
    await this.untilPlayed(reply);
    if (this.state.ending || reply?.interrupted) return;
    const name = `played-${++this.marksSent}`;
    this.deps.audio.mark(name);
    const deadline = this.deps.now() + FAR_END_PLAYED_WAIT_MS;
    while (!this.state.ending && !reply?.interrupted && !this.playedMarks.has(name) && this.deps.now() < deadline) await sleep(20);
  }

  /** Waits until the far end has played everything queued (or the reply was cut). */
  async untilPlayed(reply: Reply | null): Promise<void> {
    while (!this.state.ending && !reply?.interrupted && this.playback.playing(this.deps.now())) {
      await sleep(Math.min(50, this.playback.endsAtMs - this.deps.now() + 1));
    }
  }

  /**
   * A new reply, the one under way from now on (`state.reply`). `held`: a speculative reply
   * (./speculation.ts), whose audio and use are kept apart until `keep` (or dropped with it);
   * nothing else is playing when one starts, and what plays is left alone.
   */
  start(interruptible: boolean, held = false): Reply {
    if (!held) this.playback.reset();
    // A speculative reply still under way is void once the agent says anything else.
    if (this.state.reply?.held) this.state.reply.abort.abort();
    const reply: Reply = {
      abort: new AbortController(),
      audible: false,
      interruptible: interruptible && this.options.agent.call.allow_interruptions,
      interrupted: false,
      spoken: [],
      entry: null,
      historyEntry: null,
      timing: null,
      held: held ? [] : null,
      usage: held ? noUsage() : this.state.usage,
      answersFromMs: null,
    };
    this.state.reply = reply;
    return reply;
  }

  /**
   * A speculative reply's turn is confirmed (it ended at `turnEndedAtMs`): its use joins the
   * call's, and its audio goes out, what was held first.
   */
  keep(reply: Reply, turnEndedAtMs: number): void {
    const held = reply.held ?? [];
    const { usage } = this.state;
    for (const key of Object.keys(usage) as (keyof typeof usage)[]) usage[key] += reply.usage[key];
    reply.usage = usage;
    reply.held = null;
    reply.answersFromMs = turnEndedAtMs;
    this.playback.reset();
    for (const piece of held) this.release(reply, piece.sentence, piece.mulaw, piece.sentenceStarts, turnEndedAtMs, false);
  }

  /** Records the reply's spoken text (unless barge-in recorded what was heard). */
  end(reply: Reply): void {
    if (!reply.interrupted && reply.spoken.length) {
      const text = reply.spoken.join(' ');
      reply.entry = { role: 'assistant', text, at: new Date(), interrupted: false };
      this.state.transcript.push(reply.entry);
      this.deps.audio.sendText?.({ event: 'transcript', role: 'assistant', text, interrupted: false });
      const last = this.state.history.at(-1);
      if (last?.role === 'assistant' && last.content === text) reply.historyEntry = last;
      else {
        reply.historyEntry = { role: 'assistant', content: text };
        this.state.history.push(reply.historyEntry);
      }
    }
    reply.spoken = [];
  }

  /**
   * The caller talked over the reply: its playback stops now (`interrupted`), and what they
   * heard of it goes on the transcript and in the model's history, cut short.
   */
  interrupt(reply: Reply): void {
    const { state } = this;
    const now = this.deps.now();
    const heard = this.playback.heard(now);
    this.deps.audio.clear();
    this.playback.stop(now);
    reply.interrupted = true;
    reply.abort.abort();
    this.deps.emit({ type: 'interrupted', message: heard, level: 'info', latencyMs: null });
    // The reply may already be on the transcript (its audio was all queued): cut it to what was heard.
    this.deps.audio.sendText?.({ event: 'transcript', role: 'assistant', text: heard, interrupted: true });
    if (reply.entry) Object.assign(reply.entry, { text: heard, interrupted: true });
    else state.transcript.push({ role: 'assistant', text: heard, at: new Date(), interrupted: true });
    const said = { role: 'assistant' as const, content: heard ? `${heard} ...` : '...' };
    if (reply.historyEntry) Object.assign(reply.historyEntry, said);
    else state.history.push(said);
  }

  /**
   * Sentences spoken in order: each is synthesized as a stream and its audio queued for
   * playback as it arrives. The first audio of the reply emits `tts.first_audio`, its latency
   * counted from `fromMs` (the caller finishing, or the call start for the welcome).
   */
  queue(reply: Reply, fromMs: number | null, welcome = false) {
    let chain = Promise.resolve();
    let failure: unknown = null;
    return {
      say: (sentence: string) => {
        chain = chain.then(async () => {
          if (reply.abort.signal.aborted || this.state.ending || failure) return;
          try {
            await this.speak(sentence, reply, fromMs, welcome);
          } catch (error) {
            if (!reply.abort.signal.aborted) failure = error;
          }
        });
      },
      finished: async () => {
        await chain;
        if (failure) throw failure;
      },
    };
  }

  private async speak(sentence: string, reply: Reply, fromMs: number | null, welcome: boolean): Promise<void> {
    const { voice } = this.options.agent;
    reply.usage.tts_characters += sentence.length;
    reply.timing?.synthesisStarted(this.deps.now());
    let started = false;
    for await (const mulaw of synthesizeMulaw(this.deps.synthesizer, {
      text: sentence,
      voice: voice.voice_id ?? '',
      model: voice.model,
      speed: voice.speed,
      language: voice.language,
      signal: reply.abort.signal,
    })) {
      if (reply.abort.signal.aborted || this.state.ending) return;
      this.release(reply, sentence, mulaw, !started, fromMs, welcome);
      started = true;
    }
  }

  /** The welcome's prepared audio, played as synthesized speech is (the speech server is billed only when it made it for this call). */
  async playPrepared(reply: Reply, text: string, prepared: GreetingAudio): Promise<void> {
    if (prepared.synthesized) this.state.usage.tts_characters += text.length;
    let first = true;
    for await (const mulaw of prepared.read()) {
      if (reply.abort.signal.aborted || this.state.ending) return;
      this.release(reply, text, mulaw, first, this.state.startedAtMs, true);
      first = false;
    }
  }

  /**
   * The one place a reply's audio goes to the caller: onto the playback timeline (the
   * sentence's first audio starts a piece saying it, which barge-in counts as heard), to the
   * call's audio and the recording. The reply's first audio emits `tts.first_audio`.
   */
  private release(reply: Reply, sentence: string, mulaw: Buffer, sentenceStarts: boolean, queuedFromMs: number | null, welcome: boolean): void {
    if (reply.held) {
      reply.held.push({ sentence, mulaw, sentenceStarts });
      return;
    }
    const fromMs = queuedFromMs ?? reply.answersFromMs;
    const now = this.deps.now();
    const durationMs = mulaw.length / 8;
    const startsAt = sentenceStarts ? this.playback.queue(sentence, durationMs, now) : this.playback.extend(durationMs, now);
    if (sentenceStarts) reply.spoken.push(sentence);
    this.deps.audio.play(mulaw);
    this.deps.onAgentAudio?.(mulaw, startsAt - this.state.startedAtMs);
    if (!reply.audible) {
      reply.audible = true;
      const latencyMs = fromMs === null ? null : now - fromMs;
      if (latencyMs !== null && !welcome) this.firstAudioLatencies.push(latencyMs);
      const breakdown = reply.timing?.breakdown(now);
      if (breakdown) this.voiceToVoice.push(breakdown.voice_to_voice_ms);
      if (fromMs !== null)
        this.deps.emit({ type: 'tts.first_audio', message: '', level: 'info', latencyMs, data: welcome ? { welcome: true } : { ...breakdown } });
    }
    this.state.lastActivityMs = now;
  }
}
