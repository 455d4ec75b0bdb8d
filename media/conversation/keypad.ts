import type { LlmTool } from '../../providers/llm/types';
import { DIGITS_PATTERN } from '../audio/dtmf';

/**
 * Keypad digits in a conversation (`call.keypad`), both ways:
 * - the agent's: the built-in tool `press_digits`, whose digits ./keypad-digits.ts plays as DTMF
 *   tones (../audio/dtmf.ts) on the call's audio once what the agent is saying has played;
 * - the caller's: digits the provider reports (Plivo's stream `dtmf` events) gathered into
 *   the caller's turn by `CallerDigits`.
 */

export const PRESS_DIGITS = 'press_digits';

export const PRESS_DIGITS_TOOL: LlmTool = {
  name: PRESS_DIGITS,
  description:
    'Press keys on the phone keypad (DTMF tones the other side hears), to get through a phone menu or enter a number it asks for. ' +
    'Use it when an automated menu says which key to press. `w` waits half a second and `W` one second between keys.',
  parameters: {
    type: 'object',
    properties: {
      digits: {
        type: 'string',
        pattern: DIGITS_PATTERN.source,
        description: 'The keys in order: 0-9, * and #; w and W are pauses. For example "2" or "1234#".',
      },
    },
    required: ['digits'],
    additionalProperties: false,
  },
};

/** The digits a `press_digits` call asks for, or why it cannot be done. */
export function digitsToPress(args: Record<string, unknown>): { digits: string } | { problem: string } {
  const digits = args.digits;
  if (typeof digits !== 'string' || !DIGITS_PATTERN.test(digits)) {
    return { problem: `not sent: digits must be 1 to 40 of 0-9, *, #, w and W (got ${JSON.stringify(digits ?? null)})` };
  }
  return { digits };
}

/** What the model reads, and `tool.result` says, once the tones have played. */
export function digitsSent(digits: string): string {
  return `sent: the keys ${digits} were pressed (played to the other side as keypad tones)`;
}

/** How a turn's text shows the keys the caller pressed. */
export function pressedText(digits: string): string {
  return `[pressed ${digits}]`;
}

/** Digits pressed alone form a turn after this long without another key (or at `#`). */
export const INTER_DIGIT_TIMEOUT_MS = 1_500;

/**
 * The caller's keys, gathered for their turn. Keys pressed while the caller speaks go with the
 * words of that turn (`take` when the speech turn ends); keys pressed alone make a turn of
 * their own when `#` is pressed or no key follows for INTER_DIGIT_TIMEOUT_MS, unless the
 * caller is speaking then (their speech turn takes them).
 */
export class CallerDigits {
  private pending = '';
  private timer: NodeJS.Timeout | null = null;

  /** `onAlone(digits)` makes a turn of keys pressed alone; `speaking()` says whether the caller is mid-speech. */
  constructor(
    private readonly onAlone: (digits: string) => void,
    private readonly speaking: () => boolean,
    private readonly timeoutMs = INTER_DIGIT_TIMEOUT_MS,
  ) {}

  press(digit: string): void {
    this.pending += digit;
    this.clearTimer();
    if (digit === '#') this.flush();
    else this.timer = setTimeout(() => this.flush(), this.timeoutMs);
  }

  /** The keys pressed since the last turn, for a speech turn that just ended ('' when none). */
  take(): string {
    this.clearTimer();
    const digits = this.pending;
    this.pending = '';
    return digits;
  }

  close(): void {
    this.clearTimer();
    this.pending = '';
  }

  private flush(): void {
    this.timer = null;
    // Mid-speech: the speech turn will take the keys when it ends.
    if (this.speaking() || !this.pending) return;
    this.onAlone(this.take());
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
