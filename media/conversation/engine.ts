import type { ChatMessage, LlmTool, LlmToolCall } from '../../providers/llm/types';
import type { ConversationDeps, ConversationUsage, EventLevel, TranscriptEntry, ConversationOptions, ConversationResult } from './types';
import { encodeMulaw } from '../../providers/audio/mulaw';
import { Downsampler } from '../../providers/audio/pcm';
import { SYNTHESIS_SAMPLE_RATE } from '../../providers/tts/types';
import { sleep, languageName, parseArguments, providerOf, Ended, wordCount } from './helpers';
import { PlaybackTimeline } from './playback';
import { SentenceChunker } from './sentences';
import { fillVariables } from './variables';
import { dtmfDurationMs, dtmfMulaw } from '../audio/dtmf';
import { CallerDigits, digitsSent, digitsToPress, PRESS_DIGITS, PRESS_DIGITS_TOOL, pressedText } from './keypad';
import type { JoinTransferRequest, TransferRequest, TransferResult } from '../../contracts/calls';
import { TRANSFER_TOOL_NAME, transferOf, transferSettingsOf, transferTool } from './transfer';
import { VoicemailScreen, type DetectedBy, type VoicemailDeps } from './voicemail';
import { OPT_OUT_TOOL, OPT_OUT_TOOL_NAME, OPTED_OUT_REASON, optOutMessageOf, optsOut } from './opt-out';
import type { RecognitionStream } from '../../providers/stt/types';
import { CONVERSATION_CANCELED_REASON } from '../../contracts/conversation';

/** One thing the agent says: a reply, the welcome, a goodbye or the online check. */
export interface Reply {
  abort: AbortController;
  /** Its first audio went out. */
  audible: boolean;
  /** The caller may talk over it (`allow_interruptions`, and `hangup_interruptible` for goodbyes). */
  interruptible: boolean;
  interrupted: boolean;
  /** Sentences whose audio started, until they go on the transcript. */
  spoken: string[];
  /** Its transcript and history entries once written, so barge-in can cut them to what was heard. */
  entry: TranscriptEntry | null;
  historyEntry: { role: 'assistant'; content: string | null } | null;
}

/**
 * What the turn loop (./engine.ts) and its collaborators share: the call's record (transcript,
 * the model's history, usage), the reply under way, the flags that change how caller turns are
 * taken, and how the conversation ends (once: the first `end` wins).
 */
export class ConversationState {
  readonly transcript: TranscriptEntry[] = [];
  readonly history: ChatMessage[] = [];
  readonly usage: ConversationUsage = { stt_seconds: 0, tts_characters: 0, llm_input_tokens: 0, llm_output_tokens: 0, llm_calls: 0 };
  /** The reply being generated or spoken; aborted by barge-in, a newer turn or the end. */
  reply: Reply | null = null;
  /** The agent decided to hang up (or to hand the call over): the caller's words are kept, not answered. */
  goodbye = false;
  /** `transfer_call` is handing the call to a person: the stream's close is the handover, not the caller leaving. */
  transferring = false;
  lastActivityMs = 0;
  startedAtMs = 0;
  ending: { by: string; reason: string; level: EventLevel } | null = null;
  endedAtMs = 0;
  private finished!: () => void;
  /** Settles when the conversation has ended. */
  readonly done = new Promise<void>((resolve) => (this.finished = resolve));

  constructor(private readonly deps: Pick<ConversationDeps, 'emit' | 'now'>) {}

  fail(provider: string, error: unknown): void {
    if (this.ending) return;
    const message = error instanceof Error ? error.message : String(error);
    this.deps.emit({ type: 'error', message: `${provider}: ${message}`, level: 'error', latencyMs: null, data: { provider } });
    this.end('system', 'error', 'error');
  }

  end(by: string, reason: string, level: EventLevel): void {
    if (this.ending) return;
    this.ending = { by, reason, level };
    this.endedAtMs = this.deps.now();
    this.reply?.abort.abort();
    this.finished();
  }
}

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

  /** A new reply, the one under way from now on (`state.reply`). */
  start(interruptible: boolean): Reply {
    this.playback.reset();
    const reply: Reply = {
      abort: new AbortController(),
      audible: false,
      interruptible: interruptible && this.options.agent.call.allow_interruptions,
      interrupted: false,
      spoken: [],
      entry: null,
      historyEntry: null,
    };
    this.state.reply = reply;
    return reply;
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
    const downsampler = new Downsampler(SYNTHESIS_SAMPLE_RATE / 8000);
    this.state.usage.tts_characters += sentence.length;
    let started = false;
    for await (const pcm of this.deps.synthesizer.synthesize({
      text: sentence,
      voice: voice.voice_id ?? '',
      model: voice.model,
      speed: voice.speed,
      language: voice.language,
      signal: reply.abort.signal,
    })) {
      if (reply.abort.signal.aborted || this.state.ending) return;
      const mulaw = encodeMulaw(downsampler.pushBytes(pcm));
      if (!mulaw.length) continue;
      this.release(reply, sentence, mulaw, !started, fromMs, welcome);
      started = true;
    }
  }

  /**
   * The one place a reply's audio goes to the caller: onto the playback timeline (the
   * sentence's first audio starts a piece saying it, which barge-in counts as heard), to the
   * call's audio and the recording. The reply's first audio emits `tts.first_audio`.
   */
  private release(reply: Reply, sentence: string, mulaw: Buffer, sentenceStarts: boolean, fromMs: number | null, welcome: boolean): void {
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
      if (fromMs !== null) this.deps.emit({ type: 'tts.first_audio', message: '', level: 'info', latencyMs, data: welcome ? { welcome: true } : {} });
    }
    this.state.lastActivityMs = now;
  }
}

/** What the turn loop (./engine.ts) hands its collaborators: the call's settings and services, the shared state, the agent's voice. */
export interface ConversationContext {
  readonly options: ConversationOptions;
  readonly deps: ConversationDeps;
  readonly state: ConversationState;
  readonly speech: AgentSpeech;
}

/** One short question to the agent's model beside the conversation (temperature 0), counted in the call's usage. */
export async function askModel(ctx: ConversationContext, maxTokens: number, system: string, user: string): Promise<string> {
  ctx.state.usage.llm_calls++;
  const answer = await ctx.deps.languageModel.complete({
    model: ctx.options.agent.llm.model,
    temperature: 0,
    maxTokens,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
  });
  ctx.state.usage.llm_input_tokens += answer.usage.inputTokens;
  ctx.state.usage.llm_output_tokens += answer.usage.outputTokens;
  return answer.text;
}

/**
 * The agent's language model in the conversation: its system prompt (the agent's, with its
 * `{variables}` filled, and the language to speak), one streamed round of a reply, spoken
 * sentence by sentence as it arrives, and the hang-up prompt's yes-or-no question.
 */
export class AgentModel {
  private readonly systemPrompt: string;

  /** `tools`: what the model is offered (./tool-calls.ts). */
  constructor(
    private readonly ctx: ConversationContext,
    private readonly tools: LlmTool[],
  ) {
    const { agent, userData } = ctx.options;
    const language = `Speak ${languageName(agent.voice.language)}, the caller's language, in short sentences fit to be spoken on a phone call.`;
    this.systemPrompt = [fillVariables(agent.system_prompt, userData), language].filter(Boolean).join('\n\n');
  }

  /** One model round: streams the text into speech as sentences complete; answers the text and tool calls. */
  async generate(
    reply: Reply,
    passages: string[],
    onFirstToken: (modelMs: number) => void,
    turnEndedAtMs: number | null,
  ): Promise<{ text: string; toolCalls: LlmToolCall[] }> {
    const { llm } = this.ctx.options.agent;
    const { usage } = this.ctx.state;
    const messages: ChatMessage[] = [{ role: 'system', content: this.systemPrompt }];
    if (passages.length)
      messages.push({
        role: 'system',
        content: `Passages from the knowledge base that may help with the caller's last words:\n\n${passages.join('\n\n---\n\n')}`,
      });
    messages.push(...this.ctx.state.history);
    const chunker = new SentenceChunker();
    const speech = this.ctx.speech.queue(reply, turnEndedAtMs);
    const sentAt = this.ctx.deps.now();
    let text = '';
    const toolCalls: LlmToolCall[] = [];
    usage.llm_calls++;
    try {
      for await (const event of this.ctx.deps.languageModel.stream({
        model: llm.model,
        messages,
        tools: this.tools,
        temperature: llm.temperature,
        maxTokens: llm.max_tokens,
        signal: reply.abort.signal,
      })) {
        if (event.type === 'text') {
          onFirstToken(this.ctx.deps.now() - sentAt);
          text += event.text;
          for (const sentence of chunker.push(event.text)) speech.say(sentence);
        } else if (event.type === 'tool_call') {
          onFirstToken(this.ctx.deps.now() - sentAt);
          toolCalls.push(event.call);
        } else {
          usage.llm_input_tokens += event.usage.inputTokens;
          usage.llm_output_tokens += event.usage.outputTokens;
        }
      }
    } catch (error) {
      if (reply.abort.signal.aborted) return { text: '', toolCalls: [] };
      throw error;
    }
    const rest = chunker.flush();
    if (rest) speech.say(rest);
    await speech.finished();
    return { text: text.trim(), toolCalls };
  }

  /** Asks the model, yes or no, whether the conversation is over (`hangup_prompt`). */
  async conversationOver(): Promise<boolean> {
    const { call } = this.ctx.options.agent;
    const lines = this.ctx.state.transcript.map((t) => `${t.role}: ${t.text}`).join('\n');
    const question = `${call.hangup_prompt || 'Is the conversation over?'}\n\nAnswer Yes or No.`;
    const answer = await askModel(
      this.ctx,
      16,
      'You decide whether a phone conversation is over. Answer Yes or No only.',
      `Conversation so far:\n${lines}\n\n${question}`,
    );
    return /^\s*yes\b/i.test(answer);
  }
}

/**
 * The keypad in a conversation (`call.keypad`, ./keypad.ts): the agent's `press_digits` played
 * as DTMF tones, and the caller's keys gathered for their turns.
 */
export class KeypadDigits {
  /** The caller's keypad digits, gathered for their turns (`call.keypad.caller_digits`); null when off. */
  private callerDigits: CallerDigits | null = null;

  constructor(private readonly ctx: ConversationContext) {}

  /** `press_digits`, when the agent may press keys (`call.keypad.press_digits`); null otherwise. */
  get tool(): LlmTool | null {
    return this.ctx.options.agent.call.keypad?.press_digits ? PRESS_DIGITS_TOOL : null;
  }

  /**
   * Gathers the caller's keys (when `call.keypad.caller_digits` is on and the stream reports
   * them): keys pressed alone make a turn through `onTurn`; `speaking` says whether the caller
   * has words under way (their speech turn takes the keys then).
   */
  listen(onTurn: (pressed: string) => void, speaking: () => boolean): void {
    const { audio } = this.ctx.deps;
    if (!this.ctx.options.agent.call.keypad?.caller_digits || !audio.onDigits) return;
    const digits = new CallerDigits(onTurn, speaking);
    this.callerDigits = digits;
    audio.onDigits((digit) => {
      if (this.ctx.state.ending) return;
      this.ctx.state.lastActivityMs = this.ctx.deps.now();
      digits.press(digit);
    });
  }

  /** The keys pressed since the caller's last turn, for their speech turn that just ended ('' when none). */
  take(): string {
    return this.callerDigits?.take() ?? '';
  }

  close(): void {
    this.callerDigits?.close();
  }

  /**
   * The built-in `press_digits`: the keys as DTMF tones on the call's audio, queued after what
   * the agent is saying (the reply's text has played by now), then the result once they have
   * played. The tones are no speech: they go on the timeline as a piece without words, so
   * barge-in never counts them as heard text and no `tts.first_audio` is emitted for them.
   */
  async press(call: LlmToolCall, reply: Reply): Promise<void> {
    const { deps, state, speech } = this.ctx;
    const args = parseArguments(call.arguments);
    deps.emit({ type: 'tool.call', message: PRESS_DIGITS, level: 'info', latencyMs: null, data: { name: PRESS_DIGITS, args, url: '' } });
    const asked = digitsToPress(args);
    const startedAt = deps.now();
    let status = 200;
    let result: string;
    if ('problem' in asked) {
      status = 0;
      result = asked.problem;
    } else {
      const mulaw = dtmfMulaw(asked.digits);
      const startsAt = speech.playback.queue('', dtmfDurationMs(asked.digits), startedAt);
      deps.audio.play(mulaw);
      deps.onAgentAudio?.(mulaw, startsAt - state.startedAtMs);
      await speech.untilPlayed(reply);
      state.lastActivityMs = deps.now();
      if (reply.abort.signal.aborted) {
        status = 0;
        result = 'not all sent: the call moved on before the keys had played';
      } else result = digitsSent(asked.digits);
    }
    const latencyMs = deps.now() - startedAt;
    deps.emit({
      type: 'tool.result',
      message: `${PRESS_DIGITS}: ${status}`,
      level: status === 200 ? 'info' : 'warning',
      latencyMs,
      data: { name: PRESS_DIGITS, status, result },
    });
    state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
  }
}

/** Said to the caller before a warm transfer when the agent has no `handover_message`. */
export const WARM_HANDOVER_LINE = 'Please hold while I connect you to a colleague.';
/** The briefing of a warm transfer's person (docs/decisions/0161); the simulated model knows it by "brief a colleague". */
const TRANSFER_BRIEFING_PROMPT =
  'You brief a colleague who is taking over a phone call. In one or two short sentences, tell them who is calling and what they need, from the conversation below. Speak to the colleague directly.';

/** The built-in `transfer_call` run in a conversation (docs/decisions/0160, 0161; the tool itself: ./transfer.ts). */
export class TransferCall {
  constructor(private readonly ctx: ConversationContext) {}

  /** `transfer_call`, when the agent has destinations; null otherwise. */
  get tool(): LlmTool | null {
    return transferTool(transferSettingsOf(this.ctx.options.agent.call));
  }

  /**
   * `transfer_call` (docs/decisions/0160): the handover message plays to the end, then
   * `call.transfer_started`, and the call's workflow hands the call over. True when it did (the
   * conversation ends: the stream closes as the provider re-points the call); false when it
   * failed, which the model is told (and `call.transfer_failed` says), and the call goes on.
   */
  async run(call: LlmToolCall, reply: Reply, turnEndedAtMs: number): Promise<boolean> {
    const { options, deps, state, speech } = this.ctx;
    const settings = transferSettingsOf(options.agent.call);
    const args = parseArguments(call.arguments);
    deps.emit({ type: 'tool.call', message: TRANSFER_TOOL_NAME, level: 'info', latencyMs: null, data: { name: TRANSFER_TOOL_NAME, args, url: '' } });
    const startedAt = deps.now();
    const chosen = transferOf(args, settings);
    const answer = (status: number, result: string) => {
      deps.emit({
        type: 'tool.result',
        message: `${TRANSFER_TOOL_NAME}: ${status}`,
        level: status === 200 ? 'info' : 'warning',
        latencyMs: deps.now() - startedAt,
        data: { name: TRANSFER_TOOL_NAME, status, result },
      });
      state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
    };
    if ('problem' in chosen) {
      answer(0, chosen.problem);
      return false;
    }
    const { destination, reason } = chosen;
    // Caller turns while the call is handed over are kept, not answered.
    state.goodbye = true;
    const handover = fillVariables(settings.handover_message, options.userData) || (destination.mode === 'warm' ? WARM_HANDOVER_LINE : '');
    if (handover) {
      const saying = speech.queue(reply, turnEndedAtMs);
      saying.say(handover);
      await saying.finished();
      await speech.untilFarEndPlayed(reply);
    }
    if (state.ending) return false;
    deps.emit({
      type: 'call.transfer_started',
      message: `transferring to ${destination.number}`,
      level: 'info',
      latencyMs: null,
      data: { destination: destination.number, mode: destination.mode, reason },
    });
    state.transferring = true;
    const request: TransferRequest = {
      destination: destination.number,
      description: destination.description,
      mode: destination.mode,
      reason,
      ringTimeoutSeconds: settings.ring_timeout_seconds,
    };
    let result: TransferResult = deps.transfer
      ? await deps.transfer(request).catch((): TransferResult => ({ outcome: 'failed', reason: 'error' }))
      : { outcome: 'failed', reason: 'error' };
    let briefing = '';
    if (result.outcome === 'answered') {
      // Warm: a person took the second call; brief them, then join the two.
      const briefed = await this.briefTransferLeg(reason).catch((): null => null);
      briefing = briefed ?? '';
      result = await this.joinTransfer(
        briefed === null || state.ending !== null ? { join: false, reason: state.ending ? 'canceled' : 'error' } : { join: true },
      );
    }
    if (result.outcome === 'handed-over') {
      answer(200, briefing ? `transferred to ${destination.number} after briefing them: ${briefing}` : `transferred to ${destination.number}`);
      return true;
    }
    state.transferring = false;
    state.goodbye = false;
    const why = result.reason ?? 'error';
    deps.emit({
      type: 'call.transfer_failed',
      message: `the transfer to ${destination.number} failed: ${why}`,
      level: 'warning',
      latencyMs: null,
      data: { destination: destination.number, mode: destination.mode, reason: why },
    });
    answer(0, `the transfer failed (${why}): the caller is still with you; tell them`);
    return false;
  }

  private joinTransfer(request: JoinTransferRequest): Promise<TransferResult> {
    const { deps } = this.ctx;
    if (!deps.joinTransfer) return Promise.resolve({ outcome: 'failed', reason: 'error' });
    return deps.joinTransfer(request).catch((): TransferResult => ({ outcome: 'failed', reason: 'error' }));
  }

  /**
   * Warm: the person who answered hears a short summary of the call so far, from the language
   * model, on their own stream; answers it once played (null when their stream never came).
   */
  private async briefTransferLeg(reason: string): Promise<string | null> {
    const { options, deps, state } = this.ctx;
    if (!deps.transferLeg) return null;
    const leg = await deps.transferLeg();
    const { voice } = options.agent;
    const lines = state.transcript.map((t) => `${t.role === 'user' ? 'caller' : 'agent'}: ${t.text}`).join('\n');
    const answer = await askModel(
      this.ctx,
      120,
      TRANSFER_BRIEFING_PROMPT,
      `Reason for the transfer: ${reason || 'not given'}\n\nConversation so far:\n${lines}`,
    );
    const summary = answer.trim() || `A caller is being transferred to you: ${reason}`;
    const downsampler = new Downsampler(SYNTHESIS_SAMPLE_RATE / 8000);
    let playMs = 0;
    state.usage.tts_characters += summary.length;
    for await (const pcm of deps.synthesizer.synthesize({
      text: summary,
      voice: voice.voice_id ?? '',
      model: voice.model,
      speed: voice.speed,
      language: voice.language,
      signal: options.signal,
    })) {
      const mulaw = encodeMulaw(downsampler.pushBytes(pcm));
      if (!mulaw.length) continue;
      leg.play(mulaw);
      playMs += mulaw.length / 8;
    }
    let played = false;
    leg.onPlayed((name) => {
      if (name === 'briefed') played = true;
    });
    leg.mark('briefed');
    const deadline = deps.now() + playMs + FAR_END_PLAYED_WAIT_MS;
    while (!played && !state.ending && deps.now() < deadline) await sleep(20);
    return summary;
  }
}

/**
 * Voicemail in a conversation (docs/decisions/0158): screens an outbound call (./voicemail.ts)
 * and answers a machine with `call.voicemail.action`.
 */
export class VoicemailAnswer {
  /** The screening of the call; null when the call is not screened. */
  screen: VoicemailScreen | null = null;

  /** `dropTurns` forgets the caller turns waiting for an answer (a machine's words are not answered). */
  constructor(
    private readonly ctx: ConversationContext,
    private readonly dropTurns: () => void,
  ) {}

  /** Starts screening the call: the provider's verdict, the callee's first words and audio. */
  start(deps: VoicemailDeps): VoicemailScreen {
    const screen = new VoicemailScreen(
      this.ctx.options.agent.call.voicemail,
      deps,
      () => this.ctx.deps.now(),
      (by) => void this.answerMachine(by),
    );
    this.screen = screen;
    this.ctx.deps.audio.onAudio((mulaw) => screen.hearAudio(mulaw));
    screen.start();
    return screen;
  }

  /**
   * A machine answered: whatever the agent is saying stops, `call.voicemail`, then the action:
   * `hang_up` ends the call now; `leave_message` waits for the greeting's beep (or its end), says
   * the message (not interruptible) and ends once it has played. Both end with `voicemail`.
   */
  async answerMachine(detectedBy: DetectedBy): Promise<void> {
    const { options, deps, state, speech } = this.ctx;
    if (state.ending) return;
    const { action, message } = options.agent.call.voicemail;
    const reply = state.reply;
    if (reply && !reply.abort.signal.aborted) {
      if (speech.playback.playing(deps.now())) {
        deps.audio.clear();
        speech.playback.stop(deps.now());
      }
      reply.interrupted = true;
      reply.abort.abort();
    }
    this.dropTurns();
    const found = detectedBy === 'provider' ? "the provider's answering-machine detection" : 'the greeting in the transcript';
    deps.emit({
      type: 'call.voicemail',
      message: `an answering machine answered (${found}); ${action === 'hang_up' ? 'hanging up' : 'leaving the message after the beep'}`,
      level: 'info',
      latencyMs: null,
      data: { detected_by: detectedBy, action },
    });
    if (action === 'hang_up') return state.end('agent', 'voicemail', 'info');
    try {
      await this.screen!.untilGreetingEnds(() => state.ending !== null);
      if (state.ending) return;
      const text = fillVariables(message, options.userData);
      const said = speech.start(false);
      const saying = speech.queue(said, null);
      saying.say(text);
      await saying.finished();
      speech.end(said);
      await speech.untilFarEndPlayed(said);
      state.end('agent', 'voicemail', 'info');
    } catch (error) {
      state.fail(providerOf(error), error);
    }
  }
}

/** What the model reads, and `tool.result` says, for a tool request stopped by barge-in. */
export const TOOL_CANCELED = 'canceled: the caller interrupted before the answer arrived';

export const END_CALL_TOOL: LlmTool = {
  name: 'end_call',
  description: 'End the call. Use it when the conversation is over: the caller said goodbye, or there is nothing more to do.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
};

/** How one model message's tool calls left the turn. */
export interface ToolRound {
  /** `end_call` was called: the goodbye, then the end. */
  endCall: boolean;
  /** `transfer_call` handed the call over: the conversation ends. */
  handedOver: boolean;
  /** `add_to_do_not_call` listed the number: the confirmation, then the end. */
  optedOut: boolean;
  /** The caller interrupted: the calls not yet run were answered `not run`, and the turn stops. */
  interrupted: boolean;
}

/**
 * The tools of a conversation: what the model is offered (the agent's HTTP tools, `end_call`,
 * and the built-ins its settings turn on), and running one model message's tool calls in order,
 * each answered in the model's history (`tool.call`, then `tool.result`, on the timeline).
 */
export class ToolCalls {
  constructor(
    private readonly ctx: ConversationContext,
    private readonly keypad: KeypadDigits,
    private readonly transfer: TransferCall,
  ) {}

  /** The tools the model is offered. */
  offered(): LlmTool[] {
    const { agent } = this.ctx.options;
    const tools = [...agent.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })), END_CALL_TOOL];
    if (this.keypad.tool) tools.push(this.keypad.tool);
    if (this.transfer.tool) tools.push(this.transfer.tool);
    if (this.offersOptOut()) tools.push(OPT_OUT_TOOL);
    return tools;
  }

  /** Runs the tool calls of one model message, in order, once the caller has heard its text. */
  async run(toolCalls: LlmToolCall[], reply: Reply, turnEndedAtMs: number): Promise<ToolRound> {
    const { history } = this.ctx.state;
    const round: ToolRound = { endCall: false, handedOver: false, optedOut: false, interrupted: false };
    for (const [index, call] of toolCalls.entries()) {
      if (reply.abort.signal.aborted) {
        // Interrupted: the rest never run, yet each call of the message needs its answer.
        for (const skipped of toolCalls.slice(index)) history.push({ role: 'tool', tool_call_id: skipped.id, content: 'not run: the caller interrupted' });
        return { ...round, interrupted: true };
      }
      if (call.name === PRESS_DIGITS && this.keypad.tool) {
        await this.keypad.press(call, reply);
        continue;
      }
      if (call.name === TRANSFER_TOOL_NAME && this.transfer.tool) {
        round.handedOver = await this.transfer.run(call, reply, turnEndedAtMs);
        if (round.handedOver) break;
        continue;
      }
      if (call.name === OPT_OUT_TOOL_NAME && this.offersOptOut()) {
        round.optedOut = (await this.optOut(call)) || round.optedOut;
        continue;
      }
      if (call.name === 'end_call') {
        this.ctx.deps.emit({ type: 'tool.call', message: 'end_call', level: 'info', latencyMs: null, data: { name: 'end_call' } });
        history.push({ role: 'tool', tool_call_id: call.id, content: 'the call ends' });
        round.endCall = true;
        continue;
      }
      await this.callTool(call, reply, turnEndedAtMs);
    }
    return round;
  }

  /** After an opt-out: the confirmation plays to the end (the caller may not talk it away), then the call ends. */
  async confirmOptOutAndEnd(): Promise<void> {
    const { options, state, speech } = this.ctx;
    state.goodbye = true;
    const reply = speech.start(false);
    const saying = speech.queue(reply, null);
    saying.say(optOutMessageOf(options.agent.call, options.agent.voice.language));
    await saying.finished();
    speech.end(reply);
    await speech.untilFarEndPlayed(reply);
    state.end('agent', OPTED_OUT_REASON, 'info');
  }

  /** An agent's HTTP tool (or a name the agent has none of, which the model is told). */
  private async callTool(call: LlmToolCall, reply: Reply, turnEndedAtMs: number): Promise<void> {
    const { options, deps, state, speech } = this.ctx;
    const tool = options.agent.tools.find((t) => t.name === call.name);
    let args: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(call.arguments || '{}');
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
    } catch {
      // The model wrote broken JSON: the tool runs without arguments and its answer tells the model.
    }
    deps.emit({ type: 'tool.call', message: call.name, level: 'info', latencyMs: null, data: { name: call.name, args, url: tool?.url ?? '' } });
    if (!tool) {
      const result = `no tool named ${call.name}`;
      deps.emit({ type: 'tool.result', message: result, level: 'warning', latencyMs: 0, data: { name: call.name, status: 0, result } });
      state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      return;
    }
    // The pre-call message plays while the request runs; when it is the reply's first audio,
    // it is the one `tts.first_audio` reports (the caller hears the agent from then on).
    const saying = tool.pre_call_message ? speech.queue(reply, turnEndedAtMs) : null;
    saying?.say(fillVariables(tool.pre_call_message, options.userData));
    // Barge-in aborts the reply's signal, which stops the request under way: the caller moved on.
    const run = await deps.runTool(tool, args, reply.abort.signal);
    await saying?.finished();
    if (run.error?.kind === 'canceled') {
      const result = TOOL_CANCELED;
      // The contract: warning unless the status is 2xx (status 0: no answer arrived).
      deps.emit({
        type: 'tool.result',
        message: `${call.name}: canceled`,
        level: 'warning',
        latencyMs: run.latency_ms,
        data: { name: call.name, status: 0, result },
      });
      state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      return;
    }
    const status = run.status ?? 0;
    const result = run.error && run.status === null ? `the tool did not answer (${run.error.kind}: ${run.error.message})` : run.result;
    deps.emit({
      type: 'tool.result',
      message: `${call.name}: ${status}`,
      level: run.ok ? 'info' : 'warning',
      latencyMs: run.latency_ms,
      data: { name: call.name, status, result },
    });
    state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
  }

  private offersOptOut(): boolean {
    return optsOut(this.ctx.options.agent.call) && this.ctx.deps.optOut !== undefined;
  }

  /**
   * The built-in `add_to_do_not_call` (docs/decisions/0206): the caller's number goes on the
   * do-not-call list (`tool.call`, `tool.result`, then `call.opted_out`). True when it is listed;
   * a failure is told to the model, and the call goes on.
   */
  private async optOut(call: LlmToolCall): Promise<boolean> {
    const { deps, state } = this.ctx;
    deps.emit({ type: 'tool.call', message: OPT_OUT_TOOL_NAME, level: 'info', latencyMs: null, data: { name: OPT_OUT_TOOL_NAME, args: {}, url: '' } });
    const startedAt = deps.now();
    try {
      const { number } = await deps.optOut!();
      const result = 'the number is on the do-not-call list; the call ends after the confirmation';
      deps.emit({
        type: 'tool.result',
        message: `${OPT_OUT_TOOL_NAME}: 200`,
        level: 'info',
        latencyMs: deps.now() - startedAt,
        data: { name: OPT_OUT_TOOL_NAME, status: 200, result },
      });
      state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      deps.emit({
        type: 'call.opted_out',
        message: `the caller asked not to be called again: ${number} is on the do-not-call list`,
        level: 'info',
        latencyMs: null,
        data: { number, source: 'opt_out' },
      });
      return true;
    } catch (error) {
      const result = `the number could not be listed: ${error instanceof Error ? error.message : String(error)}`;
      deps.emit({
        type: 'tool.result',
        message: `${OPT_OUT_TOOL_NAME}: 0`,
        level: 'warning',
        latencyMs: deps.now() - startedAt,
        data: { name: OPT_OUT_TOOL_NAME, status: 0, result },
      });
      state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      return false;
    }
  }
}

export type {
  ConversationAgent,
  ConversationDeps,
  ConversationEvent,
  ConversationOptions,
  ConversationResult,
  ConversationUsage,
  EventLevel,
  TranscriptEntry,
} from './types';

/** Model rounds one caller turn may take (tool calls, then the answer). */
const MAX_TOOL_ROUNDS = 4;
/** How often silence and the length limit are looked at. */
const WATCH_INTERVAL_MS = 100;

/**
 * One live conversation: caller audio -> speech recognition (end of turn) -> language model
 * (streamed tokens and tool calls) -> sentences -> speech synthesis (streamed) -> caller.
 * Barge-in stops playback at once and keeps what the caller heard. It ends on `end_call`
 * (after the hang-up message), the hang-up prompt, the caller hanging up, silence, the length
 * limit, cancellation or an error; `run` answers how, with the transcript and usage.
 *
 * This class is the turn loop: caller turns in (`heardTurn`), one reply at a time (`answer`:
 * the reply starts with `speech.start`, its audio goes out in AgentSpeech.release, ./speech.ts).
 * Its collaborators, sharing ./state.ts through ./context.ts, do the rest: the agent's voice
 * (./speech.ts), its model (./agent-model.ts), tool calls (./tool-calls.ts), transfers
 * (./transfer-call.ts), voicemail (./voicemail-answer.ts) and the keypad (./keypad-digits.ts).
 */
export class Conversation {
  private readonly state: ConversationState;
  private readonly speech: AgentSpeech;
  private readonly keypad: KeypadDigits;
  private readonly voicemail: VoicemailAnswer;
  private readonly tools: ToolCalls;
  private readonly model: AgentModel;
  private readonly turns: { text: string; endedAtMs: number }[] = [];
  private recognition: RecognitionStream | null = null;
  private working = false;
  private onlineCheckAsked = false;
  /** The caller has words under way (an interim since their last turn): their turn will take the digits. */
  private callerSpeaking = false;

  constructor(
    private readonly options: ConversationOptions,
    private readonly deps: ConversationDeps,
  ) {
    this.state = new ConversationState(deps);
    this.speech = new AgentSpeech(options, deps, this.state);
    const ctx: ConversationContext = { options, deps, state: this.state, speech: this.speech };
    this.keypad = new KeypadDigits(ctx);
    this.voicemail = new VoicemailAnswer(ctx, () => (this.turns.length = 0));
    this.tools = new ToolCalls(ctx, this.keypad, new TransferCall(ctx));
    this.model = new AgentModel(ctx, this.tools.offered());
  }

  /**
   * The call's length limit as the call's workflow set it from the balance (docs/decisions/0165:
   * a conversation may start before the workflow has claimed it, under the agent's own limit).
   */
  limitTo(capSeconds: number, capReason: string): void {
    this.options.capSeconds = capSeconds;
    this.options.capReason = capReason;
  }

  async run(): Promise<ConversationResult> {
    const { audio } = this.deps;
    const { agent } = this.options;
    const { state } = this;
    state.startedAtMs = this.deps.now();
    state.lastActivityMs = state.startedAtMs;
    // A stream that closes while the call is handed to a person closed because of the transfer.
    audio.onClose(() => (state.transferring ? state.end('agent', 'transferred', 'info') : state.end('caller', 'the caller hung up', 'info')));
    audio.onPlayed((name) => this.speech.played(name));
    // The workflow tells this reason from the conversation's own ends (it canceled us because the call was over).
    if (this.options.signal.aborted) state.end('system', CONVERSATION_CANCELED_REASON, 'info');
    this.options.signal.addEventListener('abort', () => state.end('system', CONVERSATION_CANCELED_REASON, 'info'), { once: true });
    const watcher = setInterval(() => this.watch(), WATCH_INTERVAL_MS);
    try {
      this.recognition = await this.deps.transcriber.open(
        {
          provider: agent.transcriber.provider,
          model: agent.transcriber.model,
          language: agent.transcriber.language,
          turnDetection: agent.transcriber.turn_detection,
          endpointingMs: agent.transcriber.endpointing_ms,
          keyterms: agent.transcriber.keyterms,
        },
        {
          onInterim: (text) => this.heardInterim(text),
          onTurnEnd: (turn) => this.heardTurn(turn.text),
          onError: (error) => state.fail('speech recognition', error),
        },
      );
      audio.onAudio((mulaw) => {
        this.recognition?.sendAudio(mulaw);
        this.deps.onCallerAudio?.(mulaw, this.deps.now() - state.startedAtMs);
      });
      this.keypad.listen(
        (pressed) => this.heardTurn('', pressed),
        () => this.callerSpeaking,
      );
      // A screened call holds its welcome until the callee is known to be no machine (./voicemail.ts).
      const machine = this.deps.voicemail ? await this.voicemail.start(this.deps.voicemail).untilWelcome() : false;
      if (agent.welcome_message && !state.ending && !machine) await this.welcome(fillVariables(agent.welcome_message, this.options.userData));
    } catch (error) {
      if (!(error instanceof Ended)) state.fail(providerOf(error), error);
    }
    await state.done;
    clearInterval(watcher);
    this.keypad.close();
    this.voicemail.screen?.stop();
    await this.closeRecognition();
    const latencies = this.speech.firstAudioLatencies;
    return {
      endedBy: state.ending!.by,
      reason: state.ending!.reason,
      level: state.ending!.level,
      startedAtMs: state.startedAtMs,
      endedAtMs: state.endedAtMs,
      transcript: state.transcript,
      usage: state.usage,
      avgFirstAudioMs: latencies.length ? Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length) : null,
      voicemailAction: this.voicemail.screen?.machine && state.ending!.reason === 'voicemail' ? agent.call.voicemail.action : null,
    };
  }

  // ---- the caller ----

  private heardInterim(text: string): void {
    if (this.state.ending || !text.trim()) return;
    this.state.lastActivityMs = this.deps.now();
    this.callerSpeaking = true;
    // A greeting's words find a machine (and nobody barges in on a machine).
    if (this.voicemail.screen?.heard(text, false)) return;
    const reply = this.state.reply;
    if (!reply || reply.interrupted || !reply.interruptible || !this.speech.playback.playing(this.deps.now())) return;
    if (wordCount(text) >= this.options.agent.call.interruption_min_words) this.bargeIn();
  }

  /** A turn of the caller: their words (from recognition), with the keys pressed since their last turn (`call.keypad.caller_digits`). */
  private heardTurn(words: string, pressed?: string): void {
    const { state } = this;
    if (state.ending) return;
    if (pressed === undefined) {
      // A speech turn: the caller's words are done, and it takes the keys pressed meanwhile.
      if (!words.trim()) return;
      this.callerSpeaking = false;
    }
    const digits = pressed ?? this.keypad.take();
    const text = [words.trim(), digits ? pressedText(digits) : ''].filter(Boolean).join(' ');
    if (!text) return;
    const now = this.deps.now();
    state.lastActivityMs = now;
    this.deps.emit({ type: 'user.turn', message: text, level: 'info', latencyMs: null, data: { after_goodbye: state.goodbye, digits } });
    state.transcript.push({ role: 'user', text, at: new Date(), interrupted: false });
    this.deps.audio.sendText?.({ event: 'transcript', role: 'user', text, interrupted: false });
    if (state.goodbye) return; // the agent decided to hang up: the words are kept, not answered
    const screen = this.voicemail.screen;
    if (screen?.heard(text, true) && (screen.machine || this.options.agent.welcome_message)) {
      // A machine's greeting is kept, not answered; a person's first words while the welcome was held are answered by the welcome (the model answers them when there is none).
      if (!screen.machine) state.history.push({ role: 'user', content: text });
      return;
    }
    this.turns.push({ text, endedAtMs: now });
    const reply = state.reply;
    if (reply && !reply.audible && !reply.interrupted) {
      // The caller went on before the agent said anything: answer everything they said.
      reply.interrupted = true;
      reply.abort.abort();
    }
    void this.work();
  }

  /** The caller talked over the agent: stop playback now and keep what they heard. */
  private bargeIn(): void {
    this.speech.interrupt(this.state.reply!);
    // Talking over the goodbye keeps the call going: the caller has more to say.
    this.state.goodbye = false;
  }

  // ---- the agent ----

  /** Answers caller turns one at a time; a turn that arrives meanwhile is answered next. */
  private async work(): Promise<void> {
    if (this.working) return;
    this.working = true;
    try {
      while (this.turns.length && !this.state.ending) {
        const turns = this.turns.splice(0);
        const text = turns.map((t) => t.text).join(' ');
        this.state.history.push({ role: 'user', content: text });
        await this.answer(text, turns.at(-1)!.endedAtMs);
      }
    } catch (error) {
      if (!(error instanceof Ended)) this.state.fail(providerOf(error), error);
    } finally {
      this.working = false;
    }
  }

  /**
   * The reply to the caller's turn(s): it starts here (`speech.start`), the model's rounds speak
   * as they stream (./agent-model.ts) and run their tool calls (./tool-calls.ts), then the turn may end
   * the call (`end_call`, a transfer, an opt-out, the hang-up prompt).
   */
  private async answer(turnText: string, turnEndedAtMs: number): Promise<void> {
    const { state, speech } = this;
    const reply = speech.start(true);
    const passages = this.options.agent.knowledge_base_ids.length ? await this.deps.retrieve(turnText) : [];
    let endCall = false;
    let handedOver = false;
    let optedOut = false;
    let firstToken = true;
    for (let round = 0; round < MAX_TOOL_ROUNDS && !endCall && !handedOver && !optedOut; round++) {
      const { text, toolCalls } = await this.model.generate(
        reply,
        passages,
        (modelMs) => {
          if (!firstToken) return;
          firstToken = false;
          this.deps.emit({ type: 'llm.first_token', message: '', level: 'info', latencyMs: this.deps.now() - turnEndedAtMs, data: { model_ms: modelMs } });
        },
        turnEndedAtMs,
      );
      if (reply.abort.signal.aborted) return speech.end(reply);
      if (text) this.deps.emit({ type: 'agent.reply', message: text, level: 'info', latencyMs: null });
      if (!toolCalls.length) break;
      // The tool calls of a reply run once the caller has heard its text: a caller who talks
      // over it cancels them (they never run, and the model is told only what was heard).
      if (reply.audible) await speech.untilPlayed(reply);
      if (reply.abort.signal.aborted) return speech.end(reply);
      const asked: ChatMessage & { role: 'assistant' } = { role: 'assistant', content: text || null, tool_calls: toolCalls };
      state.history.push(asked);
      // Barge-in over a pre-call message cuts this message's text to what was heard, so the tool
      // results still follow it directly (the model's protocol wants them right after).
      reply.historyEntry = asked;
      const done = await this.tools.run(toolCalls, reply, turnEndedAtMs);
      if (done.interrupted) return speech.end(reply);
      endCall ||= done.endCall;
      handedOver ||= done.handedOver;
      optedOut ||= done.optedOut;
      reply.historyEntry = null; // what follows the results is the next round's
    }
    if (handedOver) {
      speech.end(reply);
      return state.end('agent', 'transferred', 'info');
    }
    if (optedOut) {
      speech.end(reply);
      return this.tools.confirmOptOutAndEnd();
    }
    if (reply.abort.signal.aborted) return speech.end(reply);
    speech.end(reply);
    if (endCall) return this.sayGoodbyeAndEnd('end_call');
    if (this.options.agent.call.hangup_on_prompt && (await this.model.conversationOver())) {
      this.deps.emit({ type: 'hangup.prompt', message: 'the hang-up prompt decided the conversation is over', level: 'info', latencyMs: null });
      return this.sayGoodbyeAndEnd('hangup prompt');
    }
  }

  /** Something the agent says on its own (the welcome, the online check, a goodbye), to its end. */
  private async say(text: string, interruptible: boolean, fromMs: number | null, welcome = false): Promise<Reply> {
    const reply = this.speech.start(interruptible);
    const saying = this.speech.queue(reply, fromMs, welcome);
    saying.say(text);
    await saying.finished();
    this.speech.end(reply);
    return reply;
  }

  private async welcome(text: string): Promise<void> {
    this.deps.emit({ type: 'welcome', message: text, level: 'info', latencyMs: null });
    await this.say(text, true, this.state.startedAtMs, true);
  }

  /** The hang-up message (interruptible when `hangup_interruptible`), then the end once it has played. */
  private async sayGoodbyeAndEnd(reason: string, by = 'agent'): Promise<void> {
    this.state.goodbye = true;
    const message = fillVariables(this.options.agent.call.hangup_message, this.options.userData);
    if (message) {
      const reply = await this.say(message, this.options.agent.call.hangup_interruptible, null);
      await this.speech.untilFarEndPlayed(reply);
      if (reply.interrupted) return; // talked over: the call goes on
    } else {
      await this.speech.untilFarEndPlayed(null);
    }
    this.state.end(by, reason, 'info');
  }

  // ---- silence, the length limit, the end ----

  private watch(): void {
    const { state } = this;
    if (state.ending) return;
    const now = this.deps.now();
    const { call } = this.options.agent;
    if (now - state.startedAtMs >= this.options.capSeconds * 1000) return state.end('system', this.options.capReason, 'info');
    if (this.working || state.goodbye || this.speech.playback.playing(now) || this.voicemail.screen?.holdsTheFloor()) return;
    const quietMs = now - Math.max(state.lastActivityMs, this.speech.playback.endsAtMs);
    if (call.check_user_online && !this.onlineCheckAsked && quietMs >= call.user_online_after_seconds * 1000) {
      this.onlineCheckAsked = true;
      void this.askIfOnline();
      return;
    }
    if (quietMs >= call.hangup_after_silence_seconds * 1000) {
      this.working = true;
      void this.sayGoodbyeAndEnd('silence', 'system')
        .catch((error: unknown) => state.fail(providerOf(error), error))
        .finally(() => {
          // A goodbye the caller talked over leaves the call going: answer them.
          this.working = false;
          void this.work();
        });
    }
  }

  private async askIfOnline(): Promise<void> {
    const message = this.options.agent.call.user_online_message;
    this.deps.emit({ type: 'user.online_check', message, level: 'info', latencyMs: null });
    this.working = true;
    try {
      await this.say(message, true, null);
    } catch (error) {
      this.state.fail(providerOf(error), error);
    } finally {
      this.working = false;
    }
    void this.work();
  }

  private async closeRecognition(): Promise<void> {
    if (!this.recognition) return;
    try {
      this.state.usage.stt_seconds = Math.round((await this.recognition.close()).audioSeconds * 10) / 10;
    } catch {
      // The recognizer is gone; the seconds sent are unknown.
    }
  }
}
