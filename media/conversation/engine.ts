import type { ChatMessage } from '../../providers/llm/types';
import type { RecognitionStream } from '../../providers/stt/types';
import { CONVERSATION_CANCELED_REASON } from '../../contracts/conversation';
import { AgentModel } from './agent-model';
import type { ConversationContext } from './context';
import { Ended, providerOf, wordCount } from './helpers';
import { pressedText } from './keypad';
import { KeypadDigits } from './keypad-digits';
import { Speculation, type SpeculativeReply } from './speculation';
import { AgentSpeech } from './speech';
import { ConversationState, type Reply } from './state';
import { ToolCalls } from './tool-calls';
import { TransferCall } from './transfer-call';
import { fillVariables } from '../../domain/agents/variables';
import { VoicemailAnswer } from './voicemail-answer';
import type { ConversationDeps, ConversationOptions, ConversationResult } from './types';
import { CallerVoice, ReplyTiming, type TurnEnd } from './turn-timing';

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
 * Flux's `eager_eot_threshold` for agents with `transcriber.speculative_replies` (docs/decisions/0227):
 * the middle of Deepgram's suggested 0.3 to 0.9, lowered to the agent's `eot_threshold` when above it.
 */
export const SPECULATIVE_EAGER_THRESHOLD = 0.5;

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
  private readonly speculation: Speculation;
  /** Caller turns not answered yet; `turnIndex` is the recognizer's (null for keys alone). */
  private readonly turns: { text: string; endedAtMs: number; timing: TurnEnd | null; turnIndex: number | null }[] = [];
  /** The caller's voice as it arrives, to split each turn's wait into its stages. */
  private readonly callerVoice = new CallerVoice();
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
    this.speculation = new Speculation(ctx, this.model, deps.onSpeculation);
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
    let recognition: Promise<void> | null = null;
    try {
      // The recognizer's handshake runs alongside the welcome (docs/decisions/0221): the caller's
      // audio meanwhile waits here, and reaches it in order once it is open.
      const early: Buffer[] = [];
      audio.onAudio((mulaw) => {
        if (this.recognition) this.recognition.sendAudio(mulaw);
        else early.push(mulaw);
        this.callerVoice.heard(mulaw, this.deps.now());
        this.deps.onCallerAudio?.(mulaw, this.deps.now() - state.startedAtMs);
      });
      recognition = this.deps.transcriber
        .open(
          {
            provider: agent.transcriber.provider,
            model: agent.transcriber.model,
            language: agent.transcriber.language,
            turnDetection: agent.transcriber.turn_detection,
            endpointingMs: agent.transcriber.endpointing_ms,
            keyterms: agent.transcriber.keyterms,
            ...(agent.transcriber.speculative_replies && agent.transcriber.provider === 'provider_a'
              ? { eagerEndOfTurnThreshold: SPECULATIVE_EAGER_THRESHOLD }
              : {}),
          },
          {
            onInterim: (text) => this.heardInterim(text),
            onTurnEnd: (turn) => this.heardTurn(turn.text, undefined, turn.audioEndSeconds ?? null, turn.turnIndex),
            onEagerTurnEnd: (turn) => this.heardEarlyTurnEnd(turn.text, turn.turnIndex),
            onTurnResumed: (turn) => this.speculation.resumed(turn.turnIndex),
            onError: (error) => state.fail('speech recognition', error),
          },
        )
        .then((stream) => {
          this.recognition = stream;
          for (const mulaw of early.splice(0)) stream.sendAudio(mulaw);
        });
      this.keypad.listen(
        (pressed) => this.heardTurn('', pressed),
        () => this.callerSpeaking,
      );
      // A screened call holds its welcome until the callee is known to be no machine (./voicemail.ts), which takes the recognizer.
      if (this.deps.voicemail) await recognition;
      const machine = this.deps.voicemail ? await this.voicemail.start(this.deps.voicemail).untilWelcome() : false;
      const welcome = agent.welcome_message && !state.ending && !machine ? this.welcome(fillVariables(agent.welcome_message, this.options.userData)) : null;
      await Promise.all([recognition, welcome]);
    } catch (error) {
      if (!(error instanceof Ended)) state.fail(providerOf(error), error);
      // A failed welcome ends the call while the recognizer may still be opening: it is closed below once open.
      await recognition?.catch(() => undefined);
    }
    await state.done;
    this.speculation.drop();
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
      voiceToVoiceMs: this.speech.voiceToVoice,
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

  /**
   * The recognizer's early end of turn (Flux's EagerEndOfTurn, agents with
   * `transcriber.speculative_replies`): the reply starts now, held until the turn ends
   * (./speculation.ts). Only when nothing else is under way: no reply being worked on or
   * playing (words over the agent may be a barge-in), no goodbye, no voicemail screen holding
   * the floor.
   */
  private heardEarlyTurnEnd(words: string, turnIndex: number): void {
    const { state } = this;
    if (state.ending || state.goodbye || this.working || this.turns.length || this.voicemail.screen?.holdsTheFloor()) return;
    if (this.speech.playback.playing(this.deps.now())) return;
    this.speculation.begin(turnIndex, words);
  }

  /** A turn of the caller: their words (from recognition), with the keys pressed since their last turn (`call.keypad.caller_digits`). */
  private heardTurn(words: string, pressed?: string, audioEndSeconds: number | null = null, turnIndex: number | null = null): void {
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
    // A spoken turn's wait is timed from the caller's last sound; keys alone have no such wait.
    const timing = pressed === undefined ? this.callerVoice.turnEnded(now, audioEndSeconds) : null;
    const stages = timing
      ? { end_of_turn_ms: Math.round(timing.endOfTurnMs), recogniser_ms: timing.recogniserMs === null ? null : Math.round(timing.recogniserMs) }
      : {};
    this.deps.emit({ type: 'user.turn', message: text, level: 'info', latencyMs: null, data: { after_goodbye: state.goodbye, digits, ...stages } });
    state.transcript.push({ role: 'user', text, at: new Date(), interrupted: false });
    this.deps.audio.sendText?.({ event: 'transcript', role: 'user', text, interrupted: false });
    if (state.goodbye) return this.speculation.drop(); // the agent decided to hang up: the words are kept, not answered
    const screen = this.voicemail.screen;
    if (screen?.heard(text, true) && (screen.machine || this.options.agent.welcome_message)) {
      this.speculation.drop();
      // A machine's greeting is kept, not answered; a person's first words while the welcome was held are answered by the welcome (the model answers them when there is none).
      if (!screen.machine) state.history.push({ role: 'user', content: text });
      return;
    }
    this.turns.push({ text, endedAtMs: now, timing, turnIndex: pressed === undefined ? turnIndex : null });
    const reply = state.reply;
    if (reply && !reply.audible && !reply.interrupted && !this.speculation.holds(reply)) {
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
        // A speculative reply answers exactly the one turn it guessed; anything else drops it.
        const speculative = turns.length === 1 ? this.speculation.take(turns[0]!.turnIndex, text) : (this.speculation.drop(), null);
        this.state.history.push({ role: 'user', content: text });
        await this.answer(text, turns.at(-1)!.endedAtMs, turns.at(-1)!.timing, speculative);
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
  private async answer(turnText: string, turnEndedAtMs: number, turnEnd: TurnEnd | null, speculative: SpeculativeReply | null = null): Promise<void> {
    const { state, speech } = this;
    let firstToken = true;
    // A speculative reply's first token may have come before the turn ended: its latency is then 0.
    const heardFirstToken = (modelMs: number, atMs: number) => {
      if (!firstToken) return;
      firstToken = false;
      const data = speculative ? { model_ms: modelMs, speculative: true } : { model_ms: modelMs };
      this.deps.emit({ type: 'llm.first_token', message: '', level: 'info', latencyMs: Math.max(0, atMs - turnEndedAtMs), data });
    };
    let reply: Reply;
    if (speculative) {
      // Started on the early end of these very words: its held audio goes out now, and it goes on.
      reply = speculative.reply;
      if (turnEnd) reply.timing?.confirm(turnEnd);
      if (speculative.firstToken) heardFirstToken(speculative.firstToken.modelMs, speculative.firstToken.atMs);
      speculative.onFirstToken = heardFirstToken;
      speech.keep(reply, turnEndedAtMs);
    } else {
      reply = speech.start(true);
      reply.timing = turnEnd && new ReplyTiming(turnEnd);
    }
    const passages = speculative ? await speculative.passages : this.options.agent.knowledge_base_ids.length ? await this.deps.retrieve(turnText) : [];
    let endCall = false;
    let handedOver = false;
    let optedOut = false;
    for (let round = 0; round < MAX_TOOL_ROUNDS && !endCall && !handedOver && !optedOut; round++) {
      const { text, toolCalls } =
        round === 0 && speculative
          ? await speculative.firstRound
          : await this.model.generate(reply, passages, (modelMs) => heardFirstToken(modelMs, this.deps.now()), turnEndedAtMs);
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
    const prepared = this.deps.welcomeAudio?.(text) ?? null;
    if (!prepared) {
      await this.say(text, true, this.state.startedAtMs, true);
      return;
    }
    const reply = this.speech.start(true);
    await this.speech.playPrepared(reply, text, prepared);
    this.speech.end(reply);
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
