import type { AgentSettings, AgentTool } from '../../db/models/agent';
import { encodeMulaw } from '../../providers/audio/mulaw';
import { Downsampler } from '../../providers/audio/pcm';
import type { HttpToolRun } from '../../providers/http-tools/http-tool';
import type { ChatMessage, LanguageModel, LlmTool, LlmToolCall } from '../../providers/llm/types';
import type { RecognitionStream, Transcriber } from '../../providers/stt/types';
import { SYNTHESIS_SAMPLE_RATE, type Synthesizer } from '../../providers/tts/types';
import type { CallAudioStream } from './audio-stream';
import { PlaybackTimeline } from './playback';
import { dtmfDurationMs, dtmfMulaw } from '../audio/dtmf';
import { OPT_OUT_TOOL, OPT_OUT_TOOL_NAME, OPTED_OUT_REASON, optOutMessageOf, optsOut } from './opt-out';
import { CallerDigits, digitsSent, digitsToPress, PRESS_DIGITS, PRESS_DIGITS_TOOL, pressedText } from './keypad';
import { SentenceChunker } from './sentences';
import { VoicemailScreen, type DetectedBy, type VoicemailDeps } from './voicemail';
import { TRANSFER_TOOL_NAME, transferOf, transferSettingsOf, transferTool } from './transfer';
import type { JoinTransferRequest, TransferRequest, TransferResult } from '../../contracts/calls';
import { fillVariables } from './variables';
import { CONVERSATION_CANCELED_REASON, type ConversationUsage } from '../../contracts/conversation';
import { CallerVoice, ReplyTiming, type TurnEnd } from './turn-timing';
import type { GreetingAudio } from './greetings';

/** A call's settings as the engine runs them: the agent's, with its tools. */
export type ConversationAgent = Pick<AgentSettings, 'welcome_message' | 'system_prompt' | 'llm' | 'voice' | 'transcriber' | 'call' | 'knowledge_base_ids'> & {
  tools: AgentTool[];
};

export type EventLevel = 'info' | 'warning' | 'error';

export interface ConversationEvent {
  type: string;
  message: string;
  level: EventLevel;
  latencyMs: number | null;
  data?: Record<string, unknown>;
}

export interface ConversationDeps {
  audio: CallAudioStream;
  transcriber: Transcriber;
  languageModel: LanguageModel;
  synthesizer: Synthesizer;
  runTool(tool: AgentTool, args: Record<string, unknown>, signal: AbortSignal): Promise<HttpToolRun>;
  /** Knowledge-base passages for the caller's turn (empty when the agent has no bases). */
  retrieve(query: string): Promise<string[]>;
  /** Records an event on the call's timeline; must not block (the engine does not wait for it). */
  emit(event: ConversationEvent): void;
  /** Agent audio as it is queued for playback, `atMs` on the call's timeline (for the recording). */
  onAgentAudio?(mulaw: Buffer, atMs: number): void;
  onCallerAudio?(mulaw: Buffer, atMs: number): void;
  /** Milliseconds, monotonic enough for latencies (Date.now() in production). */
  now(): number;
  /**
   * Voicemail screening (docs/decisions/0158): given for an outbound phone call whose agent has
   * `call.voicemail.detect` on, absent otherwise (no screening).
   */
  voicemail?: VoicemailDeps;
  /**
   * `transfer_call` (docs/decisions/0160): asks the call's workflow to transfer the call; answers
   * once it was handed over or failed. Absent: the tool fails with `error` (no telephony).
   */
  transfer?(request: TransferRequest): Promise<TransferResult>;
  /** Warm: the second leg's audio stream, once the person who answered is connected to this node. */
  transferLeg?(): Promise<CallAudioStream>;
  /** Warm: after the briefing, join the two legs (the agent leaves), or give up. */
  joinTransfer?(request: JoinTransferRequest): Promise<TransferResult>;
  /**
   * `add_to_do_not_call` (docs/decisions/0206): puts the caller's number on the workspace's
   * do-not-call list and answers it. Absent (a browser call has no number): the tool is not offered.
   */
  optOut?(): Promise<{ number: string }>;
  /**
   * The welcome's audio when it was prepared for this text (./greetings.ts, docs/decisions/0221):
   * played as it is, without asking the speech server; null: synthesized as any reply.
   */
  welcomeAudio?(text: string): GreetingAudio | null;
}

export interface ConversationOptions {
  agent: ConversationAgent;
  userData: Record<string, unknown>;
  /** The call's length limit in seconds: `max_duration_seconds`, or less when the balance pays for less. */
  capSeconds: number;
  /** `hangup_reason` when the cap ends the call: `max duration reached` or `credits ran out`. */
  capReason: string;
  /** Cancels the conversation from outside (API hang-up, activity cancellation). */
  signal: AbortSignal;
}

export interface TranscriptEntry {
  role: 'assistant' | 'user';
  text: string;
  at: Date;
  interrupted: boolean;
}

export type { ConversationUsage };

export interface ConversationResult {
  /** `agent`, `caller` or `system`. */
  endedBy: string;
  reason: string;
  level: EventLevel;
  /** Epoch ms: the agent went live (the stream connected) and the conversation ended. */
  startedAtMs: number;
  endedAtMs: number;
  transcript: TranscriptEntry[];
  usage: ConversationUsage;
  /** Mean of the replies' first-audio latencies (the welcome left out); null without replies. */
  avgFirstAudioMs: number | null;
  /** Each spoken turn's voice-to-voice time on this node, in order (./turn-timing.ts, docs/decisions/0220). */
  voiceToVoiceMs: number[];
  /** A machine answered and the call ended on it (reason `voicemail`): the action taken; null otherwise. */
  voicemailAction: 'hang_up' | 'leave_message' | null;
}

/** What the model reads, and `tool.result` says, for a tool request stopped by barge-in. */
const TOOL_CANCELED = 'canceled: the caller interrupted before the answer arrived';

/** Said to the caller before a warm transfer when the agent has no `handover_message`. */
const WARM_HANDOVER_LINE = 'Please hold while I connect you to a colleague.';
/** The briefing of a warm transfer's person (docs/decisions/0161); the simulated model knows it by "brief a colleague". */
const TRANSFER_BRIEFING_PROMPT =
  'You brief a colleague who is taking over a phone call. In one or two short sentences, tell them who is calling and what they need, from the conversation below. Speak to the colleague directly.';

/** Model rounds one caller turn may take (tool calls, then the answer). */
const MAX_TOOL_ROUNDS = 4;
/** How often silence and the length limit are looked at. */
const WATCH_INTERVAL_MS = 100;
/**
 * How long the end waits, past the playback timeline, for the far end to confirm it played
 * the last words (a mark): audio that reached it late would otherwise be cut by the hang-up.
 */
const FAR_END_PLAYED_WAIT_MS = 3_000;
const END_CALL_TOOL: LlmTool = {
  name: 'end_call',
  description: 'End the call. Use it when the conversation is over: the caller said goodbye, or there is nothing more to do.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
};

/** One thing the agent says: a reply, the welcome, a goodbye or the online check. */
interface Reply {
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
  /** Where the caller's wait for it went; null for what answers no spoken turn (the welcome, goodbyes, keys). */
  timing: ReplyTiming | null;
}

class Ended extends Error {
  constructor() {
    super('the conversation ended');
  }
}

/**
 * One live conversation: caller audio -> speech recognition (end of turn) -> language model
 * (streamed tokens and tool calls) -> sentences -> speech synthesis (streamed) -> caller.
 * Barge-in stops playback at once and keeps what the caller heard. It ends on `end_call`
 * (after the hang-up message), the hang-up prompt, the caller hanging up, silence, the length
 * limit, cancellation or an error; `run` answers how, with the transcript and usage.
 */
export class Conversation {
  private readonly playback = new PlaybackTimeline();
  private readonly transcript: TranscriptEntry[] = [];
  private readonly history: ChatMessage[] = [];
  private readonly usage: ConversationUsage = { stt_seconds: 0, tts_characters: 0, llm_input_tokens: 0, llm_output_tokens: 0, llm_calls: 0 };
  private readonly firstAudioLatencies: number[] = [];
  private readonly turns: { text: string; endedAtMs: number; timing: TurnEnd | null }[] = [];
  /** The caller's voice as it arrives, to split each turn's wait into its stages. */
  private readonly callerVoice = new CallerVoice();
  private readonly voiceToVoice: number[] = [];
  private recognition: RecognitionStream | null = null;
  /** The reply being generated or spoken; aborted by barge-in, a newer turn or the end. */
  private reply: Reply | null = null;
  private working = false;
  private goodbye = false;
  /** `transfer_call` is handing the call to a person: the stream's close is the handover, not the caller leaving. */
  private transferring = false;
  private onlineCheckAsked = false;
  /** Marks the far end has reported played, and how many were sent. */
  private readonly playedMarks = new Set<string>();
  private marksSent = 0;
  private lastActivityMs = 0;
  private startedAtMs = 0;
  private ending: { by: string; reason: string; level: EventLevel } | null = null;
  private endedAtMs = 0;
  private finished!: () => void;
  private readonly done = new Promise<void>((resolve) => (this.finished = resolve));
  private readonly tools: LlmTool[];
  private readonly systemPrompt: string;
  /** Voicemail screening of an outbound call (./voicemail.ts); null when the call is not screened. */
  private voicemail: VoicemailScreen | null = null;
  /** The caller's keypad digits, gathered for their turns (`call.keypad.caller_digits`); null when off. */
  private callerDigits: CallerDigits | null = null;
  /** The caller has words under way (an interim since their last turn): their turn will take the digits. */
  private callerSpeaking = false;

  constructor(
    private readonly options: ConversationOptions,
    private readonly deps: ConversationDeps,
  ) {
    const { agent, userData } = options;
    this.tools = [...agent.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })), END_CALL_TOOL];
    if (agent.call.keypad?.press_digits) this.tools.push(PRESS_DIGITS_TOOL);
    const transfer = transferTool(transferSettingsOf(agent.call));
    if (transfer) this.tools.push(transfer);
    if (this.offersOptOut()) this.tools.push(OPT_OUT_TOOL);
    const language = `Speak ${languageName(agent.voice.language)}, the caller's language, in short sentences fit to be spoken on a phone call.`;
    this.systemPrompt = [fillVariables(agent.system_prompt, userData), language].filter(Boolean).join('\n\n');
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
    this.startedAtMs = this.deps.now();
    this.lastActivityMs = this.startedAtMs;
    // A stream that closes while the call is handed to a person closed because of the transfer.
    audio.onClose(() => (this.transferring ? this.end('agent', 'transferred', 'info') : this.end('caller', 'the caller hung up', 'info')));
    audio.onPlayed((name) => this.playedMarks.add(name));
    // The workflow tells this reason from the conversation's own ends (it canceled us because the call was over).
    if (this.options.signal.aborted) this.end('system', CONVERSATION_CANCELED_REASON, 'info');
    this.options.signal.addEventListener('abort', () => this.end('system', CONVERSATION_CANCELED_REASON, 'info'), { once: true });
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
        this.deps.onCallerAudio?.(mulaw, this.deps.now() - this.startedAtMs);
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
          },
          {
            onInterim: (text) => this.heardInterim(text),
            onTurnEnd: (turn) => this.heardTurn(turn.text, undefined, turn.audioEndSeconds ?? null),
            onError: (error) => this.fail('speech recognition', error),
          },
        )
        .then((stream) => {
          this.recognition = stream;
          for (const mulaw of early.splice(0)) stream.sendAudio(mulaw);
        });
      if (agent.call.keypad?.caller_digits && audio.onDigits) {
        const digits = new CallerDigits(
          (pressed) => this.heardTurn('', pressed),
          () => this.callerSpeaking,
        );
        this.callerDigits = digits;
        audio.onDigits((digit) => {
          if (this.ending) return;
          this.lastActivityMs = this.deps.now();
          digits.press(digit);
        });
      }
      // A screened call holds its welcome until the callee is known to be no machine (./voicemail.ts), which takes the recognizer.
      if (this.deps.voicemail) await recognition;
      const machine = this.deps.voicemail ? await this.screenForVoicemail(this.deps.voicemail).untilWelcome() : false;
      const welcome = agent.welcome_message && !this.ending && !machine ? this.welcome(fillVariables(agent.welcome_message, this.options.userData)) : null;
      await Promise.all([recognition, welcome]);
    } catch (error) {
      if (!(error instanceof Ended)) this.fail(providerOf(error), error);
      // A failed welcome ends the call while the recognizer may still be opening: it is closed below once open.
      await recognition?.catch(() => undefined);
    }
    await this.done;
    clearInterval(watcher);
    this.callerDigits?.close();
    this.voicemail?.stop();
    await this.closeRecognition();
    return {
      endedBy: this.ending!.by,
      reason: this.ending!.reason,
      level: this.ending!.level,
      startedAtMs: this.startedAtMs,
      endedAtMs: this.endedAtMs,
      transcript: this.transcript,
      usage: this.usage,
      avgFirstAudioMs: this.firstAudioLatencies.length
        ? Math.round(this.firstAudioLatencies.reduce((a, b) => a + b, 0) / this.firstAudioLatencies.length)
        : null,
      voiceToVoiceMs: this.voiceToVoice,
      voicemailAction: this.voicemail?.machine && this.ending!.reason === 'voicemail' ? agent.call.voicemail.action : null,
    };
  }

  // ---- the caller ----

  private heardInterim(text: string): void {
    if (this.ending || !text.trim()) return;
    this.lastActivityMs = this.deps.now();
    this.callerSpeaking = true;
    // A greeting's words find a machine (and nobody barges in on a machine).
    if (this.voicemail?.heard(text, false)) return;
    const reply = this.reply;
    if (!reply || reply.interrupted || !reply.interruptible || !this.playback.playing(this.deps.now())) return;
    if (wordCount(text) >= this.options.agent.call.interruption_min_words) this.bargeIn();
  }

  /** A turn of the caller: their words (from recognition), with the keys pressed since their last turn (`call.keypad.caller_digits`). */
  private heardTurn(words: string, pressed?: string, audioEndSeconds: number | null = null): void {
    if (this.ending) return;
    if (pressed === undefined) {
      // A speech turn: the caller's words are done, and it takes the keys pressed meanwhile.
      if (!words.trim()) return;
      this.callerSpeaking = false;
    }
    const digits = pressed ?? this.callerDigits?.take() ?? '';
    const text = [words.trim(), digits ? pressedText(digits) : ''].filter(Boolean).join(' ');
    if (!text) return;
    const now = this.deps.now();
    this.lastActivityMs = now;
    // A spoken turn's wait is timed from the caller's last sound; keys alone have no such wait.
    const timing = pressed === undefined ? this.callerVoice.turnEnded(now, audioEndSeconds) : null;
    const stages = timing
      ? { end_of_turn_ms: Math.round(timing.endOfTurnMs), recogniser_ms: timing.recogniserMs === null ? null : Math.round(timing.recogniserMs) }
      : {};
    this.deps.emit({ type: 'user.turn', message: text, level: 'info', latencyMs: null, data: { after_goodbye: this.goodbye, digits, ...stages } });
    this.transcript.push({ role: 'user', text, at: new Date(), interrupted: false });
    this.deps.audio.sendText?.({ event: 'transcript', role: 'user', text, interrupted: false });
    if (this.goodbye) return; // the agent decided to hang up: the words are kept, not answered
    if (this.voicemail?.heard(text, true) && (this.voicemail.machine || this.options.agent.welcome_message)) {
      // A machine's greeting is kept, not answered; a person's first words while the welcome was held are answered by the welcome (the model answers them when there is none).
      if (!this.voicemail.machine) this.history.push({ role: 'user', content: text });
      return;
    }
    this.turns.push({ text, endedAtMs: now, timing });
    const reply = this.reply;
    if (reply && !reply.audible && !reply.interrupted) {
      // The caller went on before the agent said anything: answer everything they said.
      reply.interrupted = true;
      reply.abort.abort();
    }
    void this.work();
  }

  /** The caller talked over the agent: stop playback now and keep what they heard. */
  private bargeIn(): void {
    const reply = this.reply!;
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
    else this.transcript.push({ role: 'assistant', text: heard, at: new Date(), interrupted: true });
    const said = { role: 'assistant' as const, content: heard ? `${heard} ...` : '...' };
    if (reply.historyEntry) Object.assign(reply.historyEntry, said);
    else this.history.push(said);
    // Talking over the goodbye keeps the call going: the caller has more to say.
    this.goodbye = false;
  }

  // ---- the agent ----

  /** Answers caller turns one at a time; a turn that arrives meanwhile is answered next. */
  private async work(): Promise<void> {
    if (this.working) return;
    this.working = true;
    try {
      while (this.turns.length && !this.ending) {
        const turns = this.turns.splice(0);
        const text = turns.map((t) => t.text).join(' ');
        this.history.push({ role: 'user', content: text });
        await this.answer(text, turns.at(-1)!.endedAtMs, turns.at(-1)!.timing);
      }
    } catch (error) {
      if (!(error instanceof Ended)) this.fail(providerOf(error), error);
    } finally {
      this.working = false;
    }
  }

  private async answer(turnText: string, turnEndedAtMs: number, turnEnd: TurnEnd | null): Promise<void> {
    const reply = this.startReply(true);
    reply.timing = turnEnd && new ReplyTiming(turnEnd);
    const passages = this.options.agent.knowledge_base_ids.length ? await this.deps.retrieve(turnText) : [];
    let endCall = false;
    let handedOver = false;
    let optedOut = false;
    let firstToken = true;
    for (let round = 0; round < MAX_TOOL_ROUNDS && !endCall && !handedOver && !optedOut; round++) {
      const { text, toolCalls } = await this.generate(
        reply,
        passages,
        (modelMs) => {
          if (!firstToken) return;
          firstToken = false;
          this.deps.emit({ type: 'llm.first_token', message: '', level: 'info', latencyMs: this.deps.now() - turnEndedAtMs, data: { model_ms: modelMs } });
        },
        turnEndedAtMs,
      );
      if (reply.abort.signal.aborted) return this.endReply(reply);
      if (text) this.deps.emit({ type: 'agent.reply', message: text, level: 'info', latencyMs: null });
      if (!toolCalls.length) break;
      // The tool calls of a reply run once the caller has heard its text: a caller who talks
      // over it cancels them (they never run, and the model is told only what was heard).
      if (reply.audible) await this.untilPlayed(reply);
      if (reply.abort.signal.aborted) return this.endReply(reply);
      const asked: ChatMessage & { role: 'assistant' } = { role: 'assistant', content: text || null, tool_calls: toolCalls };
      this.history.push(asked);
      // Barge-in over a pre-call message cuts this message's text to what was heard, so the tool
      // results still follow it directly (the model's protocol wants them right after).
      reply.historyEntry = asked;
      for (const [index, call] of toolCalls.entries()) {
        if (reply.abort.signal.aborted) {
          // Interrupted: the rest never run, yet each call of the message needs its answer.
          for (const skipped of toolCalls.slice(index))
            this.history.push({ role: 'tool', tool_call_id: skipped.id, content: 'not run: the caller interrupted' });
          return this.endReply(reply);
        }
        if (call.name === PRESS_DIGITS && this.options.agent.call.keypad?.press_digits) {
          await this.pressDigits(call, reply);
          continue;
        }
        if (call.name === TRANSFER_TOOL_NAME && transferTool(transferSettingsOf(this.options.agent.call))) {
          handedOver = await this.transferCall(call, reply, turnEndedAtMs);
          if (handedOver) break;
          continue;
        }
        if (call.name === OPT_OUT_TOOL_NAME && this.offersOptOut()) {
          optedOut = (await this.optOut(call)) || optedOut;
          continue;
        }
        if (call.name === 'end_call') {
          this.deps.emit({ type: 'tool.call', message: 'end_call', level: 'info', latencyMs: null, data: { name: 'end_call' } });
          this.history.push({ role: 'tool', tool_call_id: call.id, content: 'the call ends' });
          endCall = true;
          continue;
        }
        await this.callTool(call, reply, turnEndedAtMs);
      }
      reply.historyEntry = null; // what follows the results is the next round's
    }
    if (handedOver) {
      this.endReply(reply);
      return this.end('agent', 'transferred', 'info');
    }
    if (optedOut) {
      this.endReply(reply);
      return this.confirmOptOutAndEnd();
    }
    if (reply.abort.signal.aborted) return this.endReply(reply);
    this.endReply(reply);
    if (endCall) return this.sayGoodbyeAndEnd('end_call');
    if (this.options.agent.call.hangup_on_prompt && (await this.conversationOver())) {
      this.deps.emit({ type: 'hangup.prompt', message: 'the hang-up prompt decided the conversation is over', level: 'info', latencyMs: null });
      return this.sayGoodbyeAndEnd('hangup prompt');
    }
  }

  /** One model round: streams the text into speech as sentences complete; answers the text and tool calls. */
  private async generate(
    reply: Reply,
    passages: string[],
    onFirstToken: (modelMs: number) => void,
    turnEndedAtMs: number | null,
  ): Promise<{ text: string; toolCalls: LlmToolCall[] }> {
    const { llm } = this.options.agent;
    const messages: ChatMessage[] = [{ role: 'system', content: this.systemPrompt }];
    if (passages.length)
      messages.push({
        role: 'system',
        content: `Passages from the knowledge base that may help with the caller's last words:\n\n${passages.join('\n\n---\n\n')}`,
      });
    messages.push(...this.history);
    const chunker = new SentenceChunker();
    const speech = this.speechQueue(reply, turnEndedAtMs);
    const sentAt = this.deps.now();
    reply.timing?.modelRequested(sentAt);
    let text = '';
    const toolCalls: LlmToolCall[] = [];
    this.usage.llm_calls++;
    try {
      for await (const event of this.deps.languageModel.stream({
        model: llm.model,
        messages,
        tools: this.tools,
        temperature: llm.temperature,
        maxTokens: llm.max_tokens,
        signal: reply.abort.signal,
      })) {
        if (event.type === 'text') {
          onFirstToken(this.deps.now() - sentAt);
          reply.timing?.modelFirstToken(this.deps.now());
          text += event.text;
          for (const sentence of chunker.push(event.text)) {
            reply.timing?.sentence(this.deps.now());
            speech.say(sentence);
          }
        } else if (event.type === 'tool_call') {
          onFirstToken(this.deps.now() - sentAt);
          toolCalls.push(event.call);
        } else {
          this.usage.llm_input_tokens += event.usage.inputTokens;
          this.usage.llm_output_tokens += event.usage.outputTokens;
        }
      }
    } catch (error) {
      if (reply.abort.signal.aborted) return { text: '', toolCalls: [] };
      throw error;
    }
    const rest = chunker.flush();
    if (rest) {
      reply.timing?.sentence(this.deps.now());
      speech.say(rest);
    }
    await speech.finished();
    return { text: text.trim(), toolCalls };
  }

  private async callTool(call: LlmToolCall, reply: Reply, turnEndedAtMs: number): Promise<void> {
    const tool = this.options.agent.tools.find((t) => t.name === call.name);
    let args: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(call.arguments || '{}');
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
    } catch {
      // The model wrote broken JSON: the tool runs without arguments and its answer tells the model.
    }
    this.deps.emit({ type: 'tool.call', message: call.name, level: 'info', latencyMs: null, data: { name: call.name, args, url: tool?.url ?? '' } });
    if (!tool) {
      const result = `no tool named ${call.name}`;
      this.deps.emit({ type: 'tool.result', message: result, level: 'warning', latencyMs: 0, data: { name: call.name, status: 0, result } });
      this.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      return;
    }
    // The pre-call message plays while the request runs; when it is the reply's first audio,
    // it is the one `tts.first_audio` reports (the caller hears the agent from then on).
    const saying = tool.pre_call_message ? this.speechQueue(reply, turnEndedAtMs) : null;
    saying?.say(fillVariables(tool.pre_call_message, this.options.userData));
    // Barge-in aborts the reply's signal, which stops the request under way: the caller moved on.
    const run = await this.deps.runTool(tool, args, reply.abort.signal);
    await saying?.finished();
    if (run.error?.kind === 'canceled') {
      const result = TOOL_CANCELED;
      // The contract: warning unless the status is 2xx (status 0: no answer arrived).
      this.deps.emit({
        type: 'tool.result',
        message: `${call.name}: canceled`,
        level: 'warning',
        latencyMs: run.latency_ms,
        data: { name: call.name, status: 0, result },
      });
      this.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      return;
    }
    const status = run.status ?? 0;
    const result = run.error && run.status === null ? `the tool did not answer (${run.error.kind}: ${run.error.message})` : run.result;
    this.deps.emit({
      type: 'tool.result',
      message: `${call.name}: ${status}`,
      level: run.ok ? 'info' : 'warning',
      latencyMs: run.latency_ms,
      data: { name: call.name, status, result },
    });
    this.history.push({ role: 'tool', tool_call_id: call.id, content: result });
  }

  /**
   * The built-in `press_digits`: the keys as DTMF tones on the call's audio, queued after what
   * the agent is saying (the reply's text has played by now), then the result once they have
   * played. The tones are no speech: they go on the timeline as a piece without words, so
   * barge-in never counts them as heard text and no `tts.first_audio` is emitted for them.
   */
  private async pressDigits(call: LlmToolCall, reply: Reply): Promise<void> {
    const args = parseArguments(call.arguments);
    this.deps.emit({ type: 'tool.call', message: PRESS_DIGITS, level: 'info', latencyMs: null, data: { name: PRESS_DIGITS, args, url: '' } });
    const asked = digitsToPress(args);
    const startedAt = this.deps.now();
    let status = 200;
    let result: string;
    if ('problem' in asked) {
      status = 0;
      result = asked.problem;
    } else {
      const mulaw = dtmfMulaw(asked.digits);
      const startsAt = this.playback.queue('', dtmfDurationMs(asked.digits), startedAt);
      this.deps.audio.play(mulaw);
      this.deps.onAgentAudio?.(mulaw, startsAt - this.startedAtMs);
      await this.untilPlayed(reply);
      this.lastActivityMs = this.deps.now();
      if (reply.abort.signal.aborted) {
        status = 0;
        result = 'not all sent: the call moved on before the keys had played';
      } else result = digitsSent(asked.digits);
    }
    const latencyMs = this.deps.now() - startedAt;
    this.deps.emit({
      type: 'tool.result',
      message: `${PRESS_DIGITS}: ${status}`,
      level: status === 200 ? 'info' : 'warning',
      latencyMs,
      data: { name: PRESS_DIGITS, status, result },
    });
    this.history.push({ role: 'tool', tool_call_id: call.id, content: result });
  }

  /**
   * `transfer_call` (docs/decisions/0160): the handover message plays to the end, then
   * `call.transfer_started`, and the call's workflow hands the call over. True when it did (the
   * conversation ends: the stream closes as the provider re-points the call); false when it
   * failed, which the model is told (and `call.transfer_failed` says), and the call goes on.
   */
  private async transferCall(call: LlmToolCall, reply: Reply, turnEndedAtMs: number): Promise<boolean> {
    const settings = transferSettingsOf(this.options.agent.call);
    const args = parseArguments(call.arguments);
    this.deps.emit({ type: 'tool.call', message: TRANSFER_TOOL_NAME, level: 'info', latencyMs: null, data: { name: TRANSFER_TOOL_NAME, args, url: '' } });
    const startedAt = this.deps.now();
    const chosen = transferOf(args, settings);
    const answer = (status: number, result: string) => {
      this.deps.emit({
        type: 'tool.result',
        message: `${TRANSFER_TOOL_NAME}: ${status}`,
        level: status === 200 ? 'info' : 'warning',
        latencyMs: this.deps.now() - startedAt,
        data: { name: TRANSFER_TOOL_NAME, status, result },
      });
      this.history.push({ role: 'tool', tool_call_id: call.id, content: result });
    };
    if ('problem' in chosen) {
      answer(0, chosen.problem);
      return false;
    }
    const { destination, reason } = chosen;
    // Caller turns while the call is handed over are kept, not answered.
    this.goodbye = true;
    const handover = fillVariables(settings.handover_message, this.options.userData) || (destination.mode === 'warm' ? WARM_HANDOVER_LINE : '');
    if (handover) {
      const saying = this.speechQueue(reply, turnEndedAtMs);
      saying.say(handover);
      await saying.finished();
      await this.untilFarEndPlayed(reply);
    }
    if (this.ending) return false;
    this.deps.emit({
      type: 'call.transfer_started',
      message: `transferring to ${destination.number}`,
      level: 'info',
      latencyMs: null,
      data: { destination: destination.number, mode: destination.mode, reason },
    });
    this.transferring = true;
    const request: TransferRequest = {
      destination: destination.number,
      description: destination.description,
      mode: destination.mode,
      reason,
      ringTimeoutSeconds: settings.ring_timeout_seconds,
    };
    let result: TransferResult = this.deps.transfer
      ? await this.deps.transfer(request).catch((): TransferResult => ({ outcome: 'failed', reason: 'error' }))
      : { outcome: 'failed', reason: 'error' };
    let briefing = '';
    if (result.outcome === 'answered') {
      // Warm: a person took the second call; brief them, then join the two.
      const briefed = await this.briefTransferLeg(reason).catch((): null => null);
      briefing = briefed ?? '';
      result = await this.joinTransfer(briefed === null || this.ending !== null ? { join: false, reason: this.ending ? 'canceled' : 'error' } : { join: true });
    }
    if (result.outcome === 'handed-over') {
      answer(200, briefing ? `transferred to ${destination.number} after briefing them: ${briefing}` : `transferred to ${destination.number}`);
      return true;
    }
    this.transferring = false;
    this.goodbye = false;
    const why = result.reason ?? 'error';
    this.deps.emit({
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
    if (!this.deps.joinTransfer) return Promise.resolve({ outcome: 'failed', reason: 'error' });
    return this.deps.joinTransfer(request).catch((): TransferResult => ({ outcome: 'failed', reason: 'error' }));
  }

  /**
   * Warm: the person who answered hears a short summary of the call so far, from the language
   * model, on their own stream; answers it once played (null when their stream never came).
   */
  private async briefTransferLeg(reason: string): Promise<string | null> {
    if (!this.deps.transferLeg) return null;
    const leg = await this.deps.transferLeg();
    const { voice } = this.options.agent;
    const lines = this.transcript.map((t) => `${t.role === 'user' ? 'caller' : 'agent'}: ${t.text}`).join('\n');
    const answer = await this.askModel(120, TRANSFER_BRIEFING_PROMPT, `Reason for the transfer: ${reason || 'not given'}\n\nConversation so far:\n${lines}`);
    const summary = answer.trim() || `A caller is being transferred to you: ${reason}`;
    const downsampler = new Downsampler(SYNTHESIS_SAMPLE_RATE / 8000);
    let playMs = 0;
    this.usage.tts_characters += summary.length;
    for await (const pcm of this.deps.synthesizer.synthesize({
      text: summary,
      voice: voice.voice_id ?? '',
      model: voice.model,
      speed: voice.speed,
      language: voice.language,
      signal: this.options.signal,
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
    const deadline = this.deps.now() + playMs + FAR_END_PLAYED_WAIT_MS;
    while (!played && !this.ending && this.deps.now() < deadline) await sleep(20);
    return summary;
  }

  /** Asks the model, yes or no, whether the conversation is over (`hangup_prompt`). */
  private async conversationOver(): Promise<boolean> {
    const { call } = this.options.agent;
    const lines = this.transcript.map((t) => `${t.role}: ${t.text}`).join('\n');
    const question = `${call.hangup_prompt || 'Is the conversation over?'}\n\nAnswer Yes or No.`;
    const answer = await this.askModel(
      16,
      'You decide whether a phone conversation is over. Answer Yes or No only.',
      `Conversation so far:\n${lines}\n\n${question}`,
    );
    return /^\s*yes\b/i.test(answer);
  }

  /** One short question to the agent's model beside the conversation (temperature 0), counted in the call's usage. */
  private async askModel(maxTokens: number, system: string, user: string): Promise<string> {
    this.usage.llm_calls++;
    const answer = await this.deps.languageModel.complete({
      model: this.options.agent.llm.model,
      temperature: 0,
      maxTokens,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    });
    this.usage.llm_input_tokens += answer.usage.inputTokens;
    this.usage.llm_output_tokens += answer.usage.outputTokens;
    return answer.text;
  }

  // ---- voicemail (docs/decisions/0158, ./voicemail.ts) ----

  /** Starts screening the call: the provider's verdict, the callee's first words and audio. */
  private screenForVoicemail(deps: VoicemailDeps): VoicemailScreen {
    const screen = new VoicemailScreen(
      this.options.agent.call.voicemail,
      deps,
      () => this.deps.now(),
      (by) => void this.answerMachine(by),
    );
    this.voicemail = screen;
    this.deps.audio.onAudio((mulaw) => screen.hearAudio(mulaw));
    screen.start();
    return screen;
  }

  /**
   * A machine answered: whatever the agent is saying stops, `call.voicemail`, then the action:
   * `hang_up` ends the call now; `leave_message` waits for the greeting's beep (or its end), says
   * the message (not interruptible) and ends once it has played. Both end with `voicemail`.
   */
  private async answerMachine(detectedBy: DetectedBy): Promise<void> {
    if (this.ending) return;
    const { action, message } = this.options.agent.call.voicemail;
    const reply = this.reply;
    if (reply && !reply.abort.signal.aborted) {
      if (this.playback.playing(this.deps.now())) {
        this.deps.audio.clear();
        this.playback.stop(this.deps.now());
      }
      reply.interrupted = true;
      reply.abort.abort();
    }
    this.turns.length = 0;
    const found = detectedBy === 'provider' ? "the provider's answering-machine detection" : 'the greeting in the transcript';
    this.deps.emit({
      type: 'call.voicemail',
      message: `an answering machine answered (${found}); ${action === 'hang_up' ? 'hanging up' : 'leaving the message after the beep'}`,
      level: 'info',
      latencyMs: null,
      data: { detected_by: detectedBy, action },
    });
    if (action === 'hang_up') return this.end('agent', 'voicemail', 'info');
    try {
      await this.voicemail!.untilGreetingEnds(() => this.ending !== null);
      if (this.ending) return;
      const text = fillVariables(message, this.options.userData);
      const said = this.startReply(false);
      const speech = this.speechQueue(said, null);
      speech.say(text);
      await speech.finished();
      this.endReply(said);
      await this.untilFarEndPlayed(said);
      this.end('agent', 'voicemail', 'info');
    } catch (error) {
      this.fail(providerOf(error), error);
    }
  }

  private async welcome(text: string): Promise<void> {
    this.deps.emit({ type: 'welcome', message: text, level: 'info', latencyMs: null });
    const reply = this.startReply(true);
    const prepared = this.deps.welcomeAudio?.(text) ?? null;
    if (prepared) await this.playPrepared(reply, text, prepared);
    else {
      const speech = this.speechQueue(reply, this.startedAtMs, true);
      speech.say(text);
      await speech.finished();
    }
    this.endReply(reply);
  }

  /** The welcome's prepared audio, played as synthesized speech is (the speech server is billed only when it made it for this call). */
  private async playPrepared(reply: Reply, text: string, prepared: GreetingAudio): Promise<void> {
    if (prepared.synthesized) this.usage.tts_characters += text.length;
    let first = true;
    for await (const mulaw of prepared.read()) {
      if (reply.abort.signal.aborted || this.ending) return;
      this.queueSpeech(reply, text, mulaw, first, this.startedAtMs, true);
      first = false;
    }
  }

  /** The hang-up message (interruptible when `hangup_interruptible`), then the end once it has played. */
  private offersOptOut(): boolean {
    return optsOut(this.options.agent.call) && this.deps.optOut !== undefined;
  }

  /**
   * The built-in `add_to_do_not_call` (docs/decisions/0206): the caller's number goes on the
   * do-not-call list (`tool.call`, `tool.result`, then `call.opted_out`). True when it is listed;
   * a failure is told to the model, and the call goes on.
   */
  private async optOut(call: LlmToolCall): Promise<boolean> {
    this.deps.emit({ type: 'tool.call', message: OPT_OUT_TOOL_NAME, level: 'info', latencyMs: null, data: { name: OPT_OUT_TOOL_NAME, args: {}, url: '' } });
    const startedAt = this.deps.now();
    try {
      const { number } = await this.deps.optOut!();
      const result = 'the number is on the do-not-call list; the call ends after the confirmation';
      this.deps.emit({
        type: 'tool.result',
        message: `${OPT_OUT_TOOL_NAME}: 200`,
        level: 'info',
        latencyMs: this.deps.now() - startedAt,
        data: { name: OPT_OUT_TOOL_NAME, status: 200, result },
      });
      this.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      this.deps.emit({
        type: 'call.opted_out',
        message: `the caller asked not to be called again: ${number} is on the do-not-call list`,
        level: 'info',
        latencyMs: null,
        data: { number, source: 'opt_out' },
      });
      return true;
    } catch (error) {
      const result = `the number could not be listed: ${error instanceof Error ? error.message : String(error)}`;
      this.deps.emit({
        type: 'tool.result',
        message: `${OPT_OUT_TOOL_NAME}: 0`,
        level: 'warning',
        latencyMs: this.deps.now() - startedAt,
        data: { name: OPT_OUT_TOOL_NAME, status: 0, result },
      });
      this.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      return false;
    }
  }

  /** After an opt-out: the confirmation plays to the end (the caller may not talk it away), then the call ends. */
  private async confirmOptOutAndEnd(): Promise<void> {
    this.goodbye = true;
    const reply = this.startReply(false);
    const speech = this.speechQueue(reply, null);
    speech.say(optOutMessageOf(this.options.agent.call, this.options.agent.voice.language));
    await speech.finished();
    this.endReply(reply);
    await this.untilFarEndPlayed(reply);
    this.end('agent', OPTED_OUT_REASON, 'info');
  }

  private async sayGoodbyeAndEnd(reason: string, by = 'agent'): Promise<void> {
    this.goodbye = true;
    const message = fillVariables(this.options.agent.call.hangup_message, this.options.userData);
    if (message) {
      const reply = this.startReply(this.options.agent.call.hangup_interruptible);
      const speech = this.speechQueue(reply, null);
      speech.say(message);
      await speech.finished();
      this.endReply(reply);
      await this.untilFarEndPlayed(reply);
      if (reply.interrupted) return; // talked over: the call goes on
    } else {
      await this.untilFarEndPlayed(null);
    }
    this.end(by, reason, 'info');
  }

  /**
   * As untilPlayed, then until the far end confirms it played everything queued (a mark),
   * for at most FAR_END_PLAYED_WAIT_MS: the timeline counts from when audio was queued here,
   * and audio delayed on its way would be cut by the hang-up that follows.
   */
  private async untilFarEndPlayed(reply: Reply | null): Promise<void> {
    await this.untilPlayed(reply);
    if (this.ending || reply?.interrupted) return;
    const name = `played-${++this.marksSent}`;
    this.deps.audio.mark(name);
    const deadline = this.deps.now() + FAR_END_PLAYED_WAIT_MS;
    while (!this.ending && !reply?.interrupted && !this.playedMarks.has(name) && this.deps.now() < deadline) await sleep(20);
  }

  /** Waits until the far end has played everything queued (or the reply was cut). */
  private async untilPlayed(reply: Reply | null): Promise<void> {
    while (!this.ending && !reply?.interrupted && this.playback.playing(this.deps.now())) {
      await sleep(Math.min(50, this.playback.endsAtMs - this.deps.now() + 1));
    }
  }

  private startReply(interruptible: boolean): Reply {
    this.playback.reset();
    const reply: Reply = {
      abort: new AbortController(),
      audible: false,
      interruptible: interruptible && this.options.agent.call.allow_interruptions,
      interrupted: false,
      spoken: [],
      entry: null,
      historyEntry: null,
      timing: null,
    };
    this.reply = reply;
    return reply;
  }

  /** Records the reply's spoken text (unless barge-in recorded what was heard). */
  private endReply(reply: Reply): void {
    if (!reply.interrupted && reply.spoken.length) {
      const text = reply.spoken.join(' ');
      reply.entry = { role: 'assistant', text, at: new Date(), interrupted: false };
      this.transcript.push(reply.entry);
      this.deps.audio.sendText?.({ event: 'transcript', role: 'assistant', text, interrupted: false });
      const last = this.history.at(-1);
      if (last?.role === 'assistant' && last.content === text) reply.historyEntry = last;
      else {
        reply.historyEntry = { role: 'assistant', content: text };
        this.history.push(reply.historyEntry);
      }
    }
    reply.spoken = [];
  }

  /**
   * Sentences spoken in order: each is synthesized as a stream and its audio queued for
   * playback as it arrives. The first audio of the reply emits `tts.first_audio`, its latency
   * counted from `fromMs` (the caller finishing, or the call start for the welcome).
   */
  private speechQueue(reply: Reply, fromMs: number | null, welcome = false) {
    let chain = Promise.resolve();
    let failure: unknown = null;
    return {
      say: (sentence: string) => {
        chain = chain.then(async () => {
          if (reply.abort.signal.aborted || this.ending || failure) return;
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
    this.usage.tts_characters += sentence.length;
    reply.timing?.synthesisStarted(this.deps.now());
    let started = false;
    for await (const pcm of this.deps.synthesizer.synthesize({
      text: sentence,
      voice: voice.voice_id ?? '',
      model: voice.model,
      speed: voice.speed,
      language: voice.language,
      signal: reply.abort.signal,
    })) {
      if (reply.abort.signal.aborted || this.ending) return;
      const mulaw = encodeMulaw(downsampler.pushBytes(pcm));
      if (!mulaw.length) continue;
      this.queueSpeech(reply, sentence, mulaw, !started, fromMs, welcome);
      started = true;
    }
  }

  /** A piece of a sentence's audio onto the playback timeline and the stream; the reply's first emits `tts.first_audio`. */
  private queueSpeech(reply: Reply, sentence: string, mulaw: Buffer, firstOfSentence: boolean, fromMs: number | null, welcome: boolean): void {
    const now = this.deps.now();
    const durationMs = mulaw.length / 8;
    const startsAt = firstOfSentence ? this.playback.queue(sentence, durationMs, now) : this.playback.extend(durationMs, now);
    if (firstOfSentence) reply.spoken.push(sentence);
    this.deps.audio.play(mulaw);
    this.deps.onAgentAudio?.(mulaw, startsAt - this.startedAtMs);
    if (!reply.audible) {
      reply.audible = true;
      const latencyMs = fromMs === null ? null : now - fromMs;
      if (latencyMs !== null && !welcome) this.firstAudioLatencies.push(latencyMs);
      const breakdown = reply.timing?.breakdown(now);
      if (breakdown) this.voiceToVoice.push(breakdown.voice_to_voice_ms);
      if (fromMs !== null)
        this.deps.emit({ type: 'tts.first_audio', message: '', level: 'info', latencyMs, data: welcome ? { welcome: true } : { ...breakdown } });
    }
    this.lastActivityMs = now;
  }

  // ---- silence, the length limit, the end ----

  private watch(): void {
    if (this.ending) return;
    const now = this.deps.now();
    const { call } = this.options.agent;
    if (now - this.startedAtMs >= this.options.capSeconds * 1000) return this.end('system', this.options.capReason, 'info');
    if (this.working || this.goodbye || this.playback.playing(now) || this.voicemail?.holdsTheFloor()) return;
    const quietMs = now - Math.max(this.lastActivityMs, this.playback.endsAtMs);
    if (call.check_user_online && !this.onlineCheckAsked && quietMs >= call.user_online_after_seconds * 1000) {
      this.onlineCheckAsked = true;
      void this.askIfOnline();
      return;
    }
    if (quietMs >= call.hangup_after_silence_seconds * 1000) {
      this.working = true;
      void this.sayGoodbyeAndEnd('silence', 'system')
        .catch((error: unknown) => this.fail(providerOf(error), error))
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
      const reply = this.startReply(true);
      const speech = this.speechQueue(reply, null);
      speech.say(message);
      await speech.finished();
      this.endReply(reply);
    } catch (error) {
      this.fail(providerOf(error), error);
    } finally {
      this.working = false;
    }
    void this.work();
  }

  private fail(provider: string, error: unknown): void {
    if (this.ending) return;
    const message = error instanceof Error ? error.message : String(error);
    this.deps.emit({ type: 'error', message: `${provider}: ${message}`, level: 'error', latencyMs: null, data: { provider } });
    this.end('system', 'error', 'error');
  }

  private end(by: string, reason: string, level: EventLevel): void {
    if (this.ending) return;
    this.ending = { by, reason, level };
    this.endedAtMs = this.deps.now();
    this.reply?.abort.abort();
    this.finished();
  }

  private async closeRecognition(): Promise<void> {
    if (!this.recognition) return;
    try {
      this.usage.stt_seconds = Math.round((await this.recognition.close()).audioSeconds * 10) / 10;
    } catch {
      // The recognizer is gone; the seconds sent are unknown.
    }
  }
}

/** A tool call's arguments as an object; broken JSON (the model's) or anything else reads as none. */
function parseArguments(json: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(json || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // The model wrote broken JSON: the tool's answer tells the model.
  }
  return {};
}

function wordCount(text: string): number {
  return text.trim().split(/\s+/).filter(Boolean).length;
}

/** `hi` as `Hindi (hi)`, so the model cannot take the code for a word; unknown codes as they are. */
function languageName(code: string): string {
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(code);
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code; // not a well-formed language tag
  }
}

/** Which outside service an error came from, for the `error` event's `provider`. */
function providerOf(error: unknown): string {
  const service = (error as { service?: unknown } | null)?.service;
  return typeof service === 'string' ? service : 'media';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(1, ms)));
}
