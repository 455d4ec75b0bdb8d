import type { LlmTool, LlmToolCall } from '../../providers/llm/types';
import { dtmfDurationMs, dtmfMulaw } from '../audio/dtmf';
import type { ConversationContext } from './context';
import { parseArguments } from './helpers';
import { CallerDigits, digitsSent, digitsToPress, PRESS_DIGITS, PRESS_DIGITS_TOOL } from './keypad';
import type { Reply } from './state';

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
