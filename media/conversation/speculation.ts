import type { LlmToolCall } from '../../providers/llm/types';
import type { AgentModel } from './agent-model';
import type { ConversationContext } from './context';
import type { Reply } from './state';
import { ReplyTiming } from './turn-timing';
import type { SpeculationOutcome } from './types';

/** A reply started on an early end of turn, its audio held until the turn is confirmed. */
export interface SpeculativeReply {
  turnIndex: number;
  /** The caller's words as the early end of turn had them (the confirmed turn must have the same). */
  text: string;
  reply: Reply;
  /** The knowledge base's passages for those words. */
  passages: Promise<string[]>;
  /** The model's first round, its sentences synthesized into the held audio as they come. */
  firstRound: Promise<{ text: string; toolCalls: LlmToolCall[] }>;
  /** Hands on the model's first token: recorded until the reply is kept, then told to the turn's listener. */
  firstToken: { modelMs: number; atMs: number } | null;
  onFirstToken: ((modelMs: number, atMs: number) => void) | null;
}

/**
 * Speculative replies (issue 32, docs/decisions/0227): on Flux's early end of turn the model's
 * reply starts at once, its first round streamed into speech whose audio is held
 * (`AgentSpeech.release` keeps it on the reply). When the turn's end confirms the same words,
 * the turn loop takes the reply (`take`) and its audio goes out; when the caller goes on
 * (`TurnResumed`), a different turn ends, or the agent says anything else first, it is dropped:
 * aborted (the model's stream and the synthesis stop), its audio never played, and its use
 * never counted in the call's usage. Only the first round is speculative: its tool calls run
 * once the turn is confirmed, as any reply's do.
 */
export class Speculation {
  private pending: SpeculativeReply | null = null;

  constructor(
    private readonly ctx: ConversationContext,
    private readonly model: AgentModel,
    private readonly onOutcome: (outcome: SpeculationOutcome) => void = () => undefined,
  ) {}

  /** The caller has probably finished turn `turnIndex` with `text`: start its reply, held (a previous guess is void). */
  begin(turnIndex: number, text: string): void {
    this.drop();
    const words = text.trim();
    if (!words) return;
    const reply = this.ctx.speech.start(true, true);
    reply.timing = new ReplyTiming(null);
    const { deps, options } = this.ctx;
    const speculative: SpeculativeReply = {
      turnIndex,
      text: words,
      reply,
      passages: options.agent.knowledge_base_ids.length ? deps.retrieve(words) : Promise.resolve([]),
      firstRound: Promise.resolve({ text: '', toolCalls: [] }),
      firstToken: null,
      onFirstToken: null,
    };
    speculative.firstRound = speculative.passages.then((passages) =>
      this.model.generate(
        reply,
        passages,
        (modelMs) => {
          const atMs = deps.now();
          if (speculative.onFirstToken) speculative.onFirstToken(modelMs, atMs);
          else speculative.firstToken ??= { modelMs, atMs };
        },
        null,
        words,
      ),
    );
    // A failure is the turn's to report once the reply is taken; a dropped one's is nobody's.
    speculative.firstRound.catch(() => undefined);
    this.pending = speculative;
  }

  /** The caller went on speaking: the guess for `turnIndex` is void. */
  resumed(turnIndex: number): void {
    if (this.pending?.turnIndex === turnIndex) this.drop();
  }

  /** True while `reply` is the speculative reply waiting for its turn's end. */
  holds(reply: Reply): boolean {
    return this.pending?.reply === reply;
  }

  /**
   * The turn the loop is about to answer: the speculative reply when it guessed this very turn
   * (same index, same words) and is still under way; otherwise it is dropped and null answered.
   */
  take(turnIndex: number | null, text: string): SpeculativeReply | null {
    const speculative = this.pending;
    if (!speculative) return null;
    if (speculative.turnIndex !== turnIndex || speculative.text !== text.trim() || speculative.reply.abort.signal.aborted) {
      this.drop();
      return null;
    }
    this.pending = null;
    this.onOutcome('used');
    return speculative;
  }

  /** Drops the speculative reply, if any: stopped, its held audio and its use discarded. */
  drop(): void {
    const speculative = this.pending;
    if (!speculative) return;
    this.pending = null;
    const { reply } = speculative;
    reply.abort.abort();
    // Still held (never null again): nothing of it can reach the caller, even audio already on its way here.
    reply.held?.splice(0);
    if (this.ctx.state.reply === reply) this.ctx.state.reply = null;
    this.onOutcome('dropped');
  }
}
