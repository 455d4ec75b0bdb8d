import type { ChatMessage } from '../../providers/llm/types';
import type { ReplyTiming } from './turn-timing';
import type { ConversationDeps, ConversationUsage, EventLevel, TranscriptEntry } from './types';

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
  /** Where the caller's wait for it went; null for what answers no spoken turn (the welcome, goodbyes, keys). */
  timing: ReplyTiming | null;
  /**
   * A speculative reply's audio, kept here until its turn is confirmed (./speculation.ts);
   * null once it may go out as it comes, as every other reply's does.
   */
  held: HeldAudio[] | null;
  /** Where its model and speech use is counted: the call's, or a speculative reply's own until it is kept. */
  usage: ConversationUsage;
  /** When its sentences were queued before its turn was known (a speculative reply): the turn's end, its first audio's latency counts from. */
  answersFromMs: number | null;
}

/** A piece of a held reply's audio, as it would have gone out. */
export interface HeldAudio {
  sentence: string;
  mulaw: Buffer;
  sentenceStarts: boolean;
}

/** Nothing used yet: a speculative reply's own account. */
export function noUsage(): ConversationUsage {
  return { stt_seconds: 0, tts_characters: 0, llm_input_tokens: 0, llm_output_tokens: 0, llm_calls: 0 };
}

/**
 * What the turn loop (./engine.ts) and its collaborators share: the call's record (transcript,
 * the model's history, usage), the reply under way, the flags that change how caller turns are
 * taken, and how the conversation ends (once: the first `end` wins).
 */
export class ConversationState {
  readonly transcript: TranscriptEntry[] = [];
  readonly history: ChatMessage[] = [];
  readonly usage: ConversationUsage = noUsage();
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
