import { decodeMulawInto } from '../../providers/audio/mulaw';
import { MACHINE_DETECTION_TIME_MS } from '../../providers/telephony/callbacks';
import type { AgentSettings } from '../../db/models/agent';

/**
 * Voicemail screening of an outbound phone call (docs/decisions/0158, 0159), for an agent with
 * `call.voicemail.detect` on. Two routes to "a machine answered":
 * - the provider's answering-machine detection, whose verdict the API's callback route writes
 *   on the call's `answered_by`; this node reads it (`readAnsweredBy`) every POLL_MS for the first
 *   PROVIDER_WAIT_MS of the stream, and only for screened calls;
 * - the backstop: the callee's words in the first TRANSCRIPT_WINDOW_MS, matched against phrases
 *   of voicemail greetings ("leave a message", "after the beep", "mailbox", ...).
 * The welcome is held until the callee is known to be a person: the provider says so, their first
 * words end and are no greeting, or WELCOME_HOLD_MS pass. A machine found later (the welcome was
 * said, or is being said) is still answered as a machine.
 *
 * For `leave_message`, `untilGreetingEnds` says when to speak: right after the greeting's beep (a
 * tone detector on the callee's audio: one frequency held at least BEEP_MIN_MS), or, for a machine
 * that does not beep, once its greeting has been followed by GREETING_END_SILENCE_MS of silence;
 * at most MAX_GREETING_WAIT_MS after the verdict.
 */

export type VoicemailSettings = AgentSettings['call']['voicemail'];
export type AnsweredBy = 'human' | 'machine' | null;
export type DetectedBy = 'provider' | 'transcript';

export interface VoicemailDeps {
  /** The call's `answered_by` as stored (the provider's verdict, once its callback arrived). */
  readAnsweredBy(): Promise<AnsweredBy>;
  /** Writes `answered_by: machine` (the transcript found a greeting the provider missed). */
  recordMachine(): Promise<void>;
}

/** How often the call record is read for the provider's verdict, and for how long (from the stream's start). */
export const POLL_MS = 250;
export const PROVIDER_WAIT_MS = MACHINE_DETECTION_TIME_MS + 6_000;
/** The longest the welcome waits for the provider's verdict or the callee's first words. */
export const WELCOME_HOLD_MS = MACHINE_DETECTION_TIME_MS + 1_000;
/** Words heard this long into the stream may still reveal a greeting. */
export const TRANSCRIPT_WINDOW_MS = 15_000;
const GREETING_END_SILENCE_MS = 2_000;
const MAX_GREETING_WAIT_MS = 30_000;

/** Phrases that only a voicemail greeting says. */
const GREETING_PHRASES: RegExp[] = [
  /\bleave (?:me |us )?(?:a |your )?(?:brief |short |detailed )?(?:message|msg|voicemail)\b/,
  /\b(?:after|at) the (?:tone|beep|signal)\b/,
  /\bvoice ?mail\b/,
  /\bmail ?box\b/,
  /\brecord (?:a |your )message\b/,
  /\bnot available\b.*\b(?:message|tone|beep)\b/,
  /\b(?:can't|cannot|can not|unable to) (?:come to|take|answer) (?:the phone|your call)\b.*\b(?:message|tone|beep|back)\b/,
];

/** True when `text` reads like an answering machine's greeting. */
export function soundsLikeVoicemail(text: string): boolean {
  const words = text
    .toLowerCase()
    .replace(/[’`]/g, "'")
    .replace(/[^a-z0-9' ]+/g, ' ')
    .replace(/\s+/g, ' ');
  return GREETING_PHRASES.some((phrase) => phrase.test(words));
}

export class VoicemailScreen {
  /** Set once: who found the machine. */
  machine: DetectedBy | null = null;
  private human = false;
  private holding = true;
  private stopped = false;
  private readonly startedAtMs: number;
  private poller: NodeJS.Timeout | null = null;
  private readonly releases: ((machine: boolean) => void)[] = [];
  private readonly audio = new GreetingListener();

  constructor(
    readonly settings: VoicemailSettings,
    private readonly deps: VoicemailDeps,
    private readonly now: () => number,
    /** Called once when a machine is found, by either route. */
    private readonly onMachine: (detectedBy: DetectedBy) => void,
  ) {
    this.startedAtMs = now();
  }

  /** Starts reading the provider's verdict; the welcome's hold ends after WELCOME_HOLD_MS at the latest. */
  start(): void {
    const poll = async () => {
      this.poller = null;
      if (this.stopped || this.machine) return;
      try {
        const verdict = await this.deps.readAnsweredBy();
        if (verdict === 'machine') this.found('provider');
        else if (verdict === 'human') this.personFound();
      } catch {
        // A failed read is tried again at the next poll: the window bounds them.
      }
      if (this.stopped || this.machine || this.human) return;
      if (this.now() - this.startedAtMs >= PROVIDER_WAIT_MS) return;
      if (this.holding && this.now() - this.startedAtMs >= WELCOME_HOLD_MS) this.release(false);
      this.poller = setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
  }

  /** Caller audio (mu-law 8 kHz), for the beep and the greeting's end. */
  hearAudio(mulaw: Buffer): void {
    if (!this.stopped && this.now() - this.startedAtMs < MAX_GREETING_WAIT_MS + PROVIDER_WAIT_MS) this.audio.push(mulaw, this.now());
  }

  /**
   * Resolves once the welcome may play (false) or must not: a machine answered (true). Also
   * resolves true once the screen is stopped (the conversation ended).
   */
  untilWelcome(): Promise<boolean> {
    if (!this.holding) return Promise.resolve(this.machine !== null || this.stopped);
    return new Promise((resolve) => this.releases.push(resolve));
  }

  /**
   * The callee's words: an interim (`final` false) or a finished turn. Words of a greeting in the
   * first seconds find a machine; a finished turn that is no greeting ends the welcome's hold (a
   * person said hello). True when the engine must not answer the turn: the welcome was held
   * (the welcome answers it), or a machine answered.
   */
  heard(text: string, final: boolean): boolean {
    if (this.stopped) return false;
    const wasHolding = this.holding;
    if (!this.machine && this.now() - this.startedAtMs < TRANSCRIPT_WINDOW_MS && soundsLikeVoicemail(text)) this.found('transcript');
    if (final && !this.machine && this.holding) this.release(false);
    return this.machine !== null || (final && wasHolding);
  }

  /** True while the engine must keep quiet on its own: the welcome is held, or a machine answered. */
  holdsTheFloor(): boolean {
    return !this.stopped && (this.holding || this.machine !== null);
  }

  /** Resolves when a message left now would follow the greeting: after the beep, or the greeting's end without one. */
  async untilGreetingEnds(isOver: () => boolean): Promise<'beep' | 'silence' | 'timeout'> {
    const deadline = this.now() + MAX_GREETING_WAIT_MS;
    for (;;) {
      if (this.audio.beepEnded) return 'beep';
      if (!this.audio.inBeep && this.audio.silentSince(this.now()) >= GREETING_END_SILENCE_MS) return 'silence';
      if (this.now() >= deadline || isOver()) return 'timeout';
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.poller) clearTimeout(this.poller);
    this.poller = null;
    this.release(true);
  }

  private personFound(): void {
    this.human = true;
    if (this.holding) this.release(false);
  }

  private found(detectedBy: DetectedBy): void {
    if (this.machine) return;
    this.machine = detectedBy;
    if (this.poller) clearTimeout(this.poller);
    this.poller = null;
    if (detectedBy === 'transcript') void this.deps.recordMachine().catch(() => undefined);
    this.release(true);
    this.onMachine(detectedBy);
  }

  private release(machine: boolean): void {
    this.holding = false;
    for (const resolve of this.releases.splice(0)) resolve(machine);
  }
}

// ---- the greeting's beep and end, from the callee's audio ----

const BLOCK = 160; // 20 ms at 8 kHz
/** Mean square below this is silence (about -36 dBFS). */
const SILENCE_POWER = 500 * 500;
/** Candidate beep frequencies: 300 to 3000 Hz every 25 Hz (answering machines beep between about 400 and 2000 Hz). */
const BEEP_BINS = Array.from({ length: 109 }, (_, i) => 300 + 25 * i);
const BEEP_COEFFICIENTS = BEEP_BINS.map((hz) => 2 * Math.cos((2 * Math.PI * hz) / 8000));
/** Share of a block's energy at one frequency for it to count as a tone (speech and noise spread theirs). */
const TONE_PURITY = 0.5;
/** A tone held this long, within BEEP_DRIFT_BINS of one frequency, is a beep. */
const BEEP_MIN_MS = 160;
const BEEP_DRIFT_BINS = 2;

/** Follows the callee's audio in 20 ms blocks: voiced or silent, and whether a beep played and ended. */
class GreetingListener {
  inBeep = false;
  beepEnded = false;
  private readonly samples = new Float64Array(BLOCK * 4);
  private pending = 0;
  private lastVoicedAtMs: number | null = null;
  private toneBin = -1;
  private toneBlocks = 0;

  push(mulaw: Buffer, atMs: number): void {
    let offset = 0;
    while (offset < mulaw.length) {
      const take = Math.min(BLOCK - this.pending, mulaw.length - offset);
      decodeMulawInto(mulaw.subarray(offset, offset + take), this.samples, this.pending);
      this.pending += take;
      offset += take;
      if (this.pending === BLOCK) {
        this.block(atMs);
        this.pending = 0;
      }
    }
  }

  /** Milliseconds of silence after the callee's last sound; 0 before they made any. */
  silentSince(nowMs: number): number {
    return this.lastVoicedAtMs === null ? 0 : nowMs - this.lastVoicedAtMs;
  }

  private block(atMs: number): void {
    let sumSquares = 0;
    for (let i = 0; i < BLOCK; i++) sumSquares += this.samples[i]! * this.samples[i]!;
    if (sumSquares / BLOCK < SILENCE_POWER) return this.toneStopped();
    this.lastVoicedAtMs = atMs;
    if (this.beepEnded) return;
    let best = -1;
    let bestPower = 0;
    for (let k = 0; k < BEEP_COEFFICIENTS.length; k++) {
      const c = BEEP_COEFFICIENTS[k]!;
      let s1 = 0;
      let s2 = 0;
      for (let i = 0; i < BLOCK; i++) {
        const s0 = this.samples[i]! + c * s1 - s2;
        s2 = s1;
        s1 = s0;
      }
      const power = s1 * s1 + s2 * s2 - c * s1 * s2;
      if (power > bestPower) {
        bestPower = power;
        best = k;
      }
    }
    // A pure tone's power at its frequency is sum of squares x N / 2.
    const purity = bestPower / ((sumSquares * BLOCK) / 2);
    if (purity < TONE_PURITY) return this.toneStopped();
    if (this.toneBin !== -1 && Math.abs(best - this.toneBin) <= BEEP_DRIFT_BINS) this.toneBlocks++;
    else {
      this.toneStopped();
      this.toneBin = best;
      this.toneBlocks = 1;
    }
    if (this.toneBlocks * 20 >= BEEP_MIN_MS) this.inBeep = true;
  }

  private toneStopped(): void {
    if (this.inBeep) {
      this.inBeep = false;
      this.beepEnded = true;
    }
    this.toneBin = -1;
    this.toneBlocks = 0;
  }
}
