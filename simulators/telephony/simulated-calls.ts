import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { NONCE_HEADER, SIGNATURE_HEADER, plivoSignature, type PlivoFields as CallbackParams } from './plivo-signature';
import { readPlivoXml, type PlivoVerb } from './plivo-xml';
import { SimulatedCaller, type CallerStep, type StreamedConversation } from './simulated-caller';

export type { CallerStep } from './simulated-caller';

/**
 * What the callee at a number does when the simulator dials it. Delays are in seconds of the
 * simulated call, which the simulator's `timeScale` turns into real time; the conversation's
 * are real milliseconds (audio plays in real time).
 */
export type CalleeScript =
  /**
   * Rings, answers after `answerAfterSeconds`, and hangs up `hangUpAfterSeconds` after
   * answering; without it the callee stays until we hang up or the time limit ends the call.
   * When the answer XML streams the call's audio, the callee talks and listens through the
   * stream: `conversation` runs in order once it has started, then the callee stays silent.
   */
  | { kind: 'answer'; answerAfterSeconds: number; hangUpAfterSeconds?: number; conversation?: CallerStep[] }
  /**
   * An answering machine (docs/decisions/0158): answers after `answerAfterSeconds`, says
   * `greeting` at once over the stream, beeps, then records what it hears (the record's `heard`
   * after `beepedAt`) until `hangUpAfterSeconds` after the answer, or until we hang up. A call
   * created with machine detection gets the `detection` verdict (default `machine`; `human` or
   * `none` play a detector that misses) `detectAfterSeconds` (default 1.5) after the answer.
   */
  | {
      kind: 'machine';
      answerAfterSeconds: number;
      greeting: string;
      beepMs?: number;
      hangUpAfterSeconds?: number;
      detection?: 'machine' | 'human' | 'none';
      detectAfterSeconds?: number;
    }
  | { kind: 'no-answer'; ringSeconds: number }
  | { kind: 'busy' }
  | { kind: 'failed' }
  /** Plivo could not connect the call in time (a carrier's delay): it rings for `ringSeconds` (default 0), then ends `timeout`. */
  | { kind: 'timeout'; ringSeconds?: number };

/**
 * What a simulated caller dialling one of the account's numbers does once the call is
 * answered (Plivo's inbound call, see SimulatedCalls.dialIn): talks and listens through the
 * audio stream as a callee's `conversation` does, and hangs up after `hangUpAfterSeconds`
 * (simulated seconds from the answer), or with a `hangUp` step; otherwise it stays until we
 * hang up or the time limit ends the call.
 */
export interface InboundCallerScript {
  conversation?: CallerStep[];
  hangUpAfterSeconds?: number;
}

/** A number no script is set for answers after 1 s and hangs up 5 s later. */
export const DEFAULT_CALLEE: CalleeScript = { kind: 'answer', answerAfterSeconds: 1, hangUpAfterSeconds: 5 };

/** When the simulated provider's machine detection answers, in simulated seconds after the answer. */
const DEFAULT_DETECT_AFTER_SECONDS = 1.5;
/** An answering machine starts its greeting this long (real ms) after its stream opens. */
const MACHINE_PICKUP_MS = 300;
/** A `<Dial>` without `timeout` rings this long; without `timeLimit` the bridge lasts at most this (Plivo's defaults). */
const DEFAULT_DIAL_TIMEOUT_SECONDS = 30;
const DEFAULT_DIAL_TIME_LIMIT_SECONDS = 14_400;
/** Plivo's wait before it retries a callback the receiver did not take (once). */
const CALLBACK_RETRY_SECONDS = 1;
const CALLBACK_TIMEOUT_MS = 5_000;
/** The answer URL may hold its answer a while (the API waits up to 5 s for a media node). */
const ANSWER_TIMEOUT_MS = 10_000;

/**
 * Plivo's `CallStatus` words, as its callbacks send them (docs.plivo.com "Call status", and the
 * Application page's callback fields, which add `failed`): `cancel` for a call its caller (for
 * an outbound call, the API) canceled, `timeout` for one that could not be connected in time.
 */
export type PlivoCallStatus = 'ringing' | 'in-progress' | 'completed' | 'no-answer' | 'busy' | 'failed' | 'cancel' | 'timeout';

/** `queued` until the dialling starts, then the statuses the callbacks report. */
export type SimulatedCallStatus = 'queued' | PlivoCallStatus;

export interface CallbackDelivery {
  status: PlivoCallStatus;
  url: string;
  /** 1, or 2 when the receiver did not take the first one. */
  attempts: number;
  delivered: boolean;
  /** When the first attempt went out (null until then: a call's callbacks go out in order). */
  sentAt: Date | null;
  /** When the receiver's 2xx answer came back (null until then, or never). */
  deliveredAt: Date | null;
}

/**
 * One call placed with the simulator, as tests inspect it. The conversation fields stay
 * empty unless the answer XML streamed the call's audio.
 */
export interface SimulatedCall extends StreamedConversation {
  providerCallId: string;
  /** `outbound`: placed through the Call resource; `inbound`: someone dialled one of the account's numbers. */
  direction: 'outbound' | 'inbound';
  /** E.164. */
  from: string;
  /** E.164. */
  to: string;
  answerUrl: string;
  ringUrl: string | null;
  hangupUrl: string | null;
  timeLimitSeconds: number;
  /** Plivo's `machine_detection_url` (answering-machine detection asked for at creation), or null. */
  machineDetectionUrl: string | null;
  status: SimulatedCallStatus;
  history: { status: SimulatedCallStatus; at: Date }[];
  callbacks: CallbackDelivery[];
  /**
   * Transfers (docs/decisions/0160): the provider id of the call this one was bridged with (a
   * transferred call and the destination leg its `<Dial>` placed, each naming the other), or null.
   */
  bridgedWith: string | null;
  /** A destination leg placed by a transferred call's `<Dial>`: that call's provider id; null otherwise. */
  dialledBy: string | null;
}

export type CallRequest = Pick<SimulatedCall, 'from' | 'to' | 'answerUrl' | 'ringUrl' | 'hangupUrl' | 'timeLimitSeconds'> &
  Partial<Pick<SimulatedCall, 'machineDetectionUrl'>>;

/** An inbound call: the caller, the account's number dialled, and the URLs of the account's application. */
export type InboundCallRequest = Pick<SimulatedCall, 'from' | 'to' | 'answerUrl' | 'hangupUrl' | 'timeLimitSeconds'>;

/** After a callback: its answer's body to follow (an answer request), or `alone` (sent at once, nothing waits for it). */
type AfterCallback = ((body: string | null) => void) | 'alone';

interface LiveCall {
  record: SimulatedCall;
  script: CalleeScript;
  /** Real time of the answer, for the duration of a call we hang up. */
  answeredAtMs: number | null;
  timers: Set<NodeJS.Timeout>;
  /** Callbacks of one call go out one after the other, in the order of the events (all but the ring). */
  deliveries: Promise<void>;
  /** The callee's side of the audio stream, once the answer XML asked for one. */
  caller: SimulatedCaller | null;
  /** The answer request, from when it is sent until its XML has been followed. */
  answering: Promise<void> | null;
  /** Resolves when the call ends. */
  over: Promise<void>;
  markOver: () => void;
  /** A transferred call's `<Dial>` while it rings or is bridged (docs/decisions/0160). */
  dial?: DialInProgress | null;
  /** A destination leg's end, for the dial's hang-up event. */
  ending?: Ending;
  /** Plivo's `ring_timeout` of a placed call, when given. */
  ringTimeoutSeconds?: number;
  /** The conference room the call is in (docs/decisions/0161), or none. */
  room?: string | null;
}

/** A transferred call's `<Dial>` of one number: its destination leg and where its events go. */
interface DialInProgress {
  leg: LiveCall;
  actionUrl: string | null;
  callbackUrl: string | null;
  answered: boolean;
  done: boolean;
}

/** An ended call's cause as Plivo reports it, and who ended it. */
interface Ending {
  status: Exclude<PlivoCallStatus, 'ringing' | 'in-progress'>;
  cause: string;
  source: string;
  /** Simulated seconds between answer and end; 0 for a call never answered. */
  durationSeconds: number;
}

export interface CallEngineOptions {
  /** Signs the callbacks. */
  authToken: string;
  /** The account's auth id, as the audio stream's `start` frame names it. */
  accountId: string;
  /** Multiplies every delay, the callback retry's included; below 1 runs calls faster. */
  timeScale: number;
  callees: Record<string, CalleeScript>;
  /**
   * The network between the callee's phone and the provider's media server, one way: every
   * frame of the stream takes this long each way (audio, marks and DTMF alike). Read when a
   * stream opens; 0 by default.
   */
  legDelayMs?: number;
}

/**
 * The calls of the simulated account: each plays its callee's script with real timers and
 * posts Plivo's signed status callbacks (ringing -> in-progress -> completed, or ringing ->
 * no-answer or timeout, or busy, or failed; cancel when we hang up while it rings). The answer is a
 * request to the answer URL, whose XML says what the call does: stream its audio (the callee
 * then talks through ./simulated-caller.ts until the call ends, or until our side closes the
 * stream, which leaves the call nothing to do: it ends), or hang up.
 */
export class SimulatedCalls {
  private readonly live = new Map<string, LiveCall>();
  private readonly callees: Map<string, CalleeScript>;
  private readonly stop = new AbortController();

  constructor(private readonly options: CallEngineOptions) {
    if (!(options.timeScale > 0)) throw new Error('timeScale must be above 0');
    this.callees = new Map(Object.entries(options.callees));
  }

  /** The one-way network delay of the streams opened from now on (see CallEngineOptions.legDelayMs). */
  setLegDelay(ms: number): void {
    if (!(ms >= 0)) throw new Error('legDelayMs must be 0 or more');
    this.options.legDelayMs = ms;
  }

  setCallee(e164: string, script: CalleeScript): void {
    this.callees.set(e164, script);
  }

  /** Records a call; it starts dialling at `start`, once the creation was answered. */
  place(request: CallRequest & { ringTimeoutSeconds?: number }): SimulatedCall {
    const { ringTimeoutSeconds, ...fields } = request;
    const call = this.track({ machineDetectionUrl: null, ...fields, direction: 'outbound' }, this.callees.get(request.to) ?? DEFAULT_CALLEE);
    call.ringTimeoutSeconds = ringTimeoutSeconds;
    return call.record;
  }

  /**
   * Someone dials one of the account's numbers: the call rings, and the application's answer
   * URL is asked what to do (Plivo's inbound answer request: `CallStatus=ringing`,
   * `Direction=inbound`). XML that streams the audio answers the call, and the caller then
   * plays `caller`; anything else ends it unanswered (`<Hangup reason="rejected"/>`: the
   * hang-up cause `CALL_REJECTED`). The end goes to the application's hang-up URL. Answers the
   * call as it is now (a copy); `calls()` shows how it goes on.
   */
  dialIn(request: InboundCallRequest, caller: InboundCallerScript): SimulatedCall {
    const call = this.track(
      { ...request, ringUrl: null, machineDetectionUrl: null, direction: 'inbound' },
      { kind: 'answer', answerAfterSeconds: 0, hangUpAfterSeconds: caller.hangUpAfterSeconds, conversation: caller.conversation },
    );
    if (!this.stop.signal.aborted) {
      this.ring(call);
      this.notify(call, 'ringing', request.answerUrl, { Event: 'StartApp' }, (xml) => this.followInbound(call, xml));
    }
    return structuredClone(call.record);
  }

  private track(
    request: Omit<SimulatedCall, keyof StreamedConversation | 'providerCallId' | 'status' | 'history' | 'callbacks' | 'bridgedWith' | 'dialledBy'>,
    script: CalleeScript,
  ): LiveCall {
    const record: SimulatedCall = {
      bridgedWith: null,
      dialledBy: null,
      ...request,
      providerCallId: randomUUID(),
      status: 'queued',
      history: [{ status: 'queued', at: new Date() }],
      callbacks: [],
      streamConnected: false,
      streamConnectedAt: null,
      heard: [],
      said: [],
      clearedAudio: 0,
      digitsHeard: '',
      digitsPressed: '',
      beepedAt: null,
    };
    let markOver!: () => void;
    const over = new Promise<void>((resolve) => {
      markOver = resolve;
    });
    const call: LiveCall = {
      record,
      script,
      answeredAtMs: null,
      timers: new Set(),
      deliveries: Promise.resolve(),
      caller: null,
      answering: null,
      over,
      markOver,
    };
    this.live.set(record.providerCallId, call);
    return call;
  }

  start(providerCallId: string): void {
    const call = this.live.get(providerCallId);
    if (!call || this.stop.signal.aborted) return;
    const { script } = call;
    // Plivo's `ring_timeout`: a callee who would answer (or ring) longer is `no-answer` then.
    const ringsFor = script.kind === 'answer' || script.kind === 'machine' ? script.answerAfterSeconds : script.kind === 'no-answer' ? script.ringSeconds : 0;
    if (call.ringTimeoutSeconds !== undefined && ringsFor > call.ringTimeoutSeconds) {
      this.ring(call);
      return this.after(call, call.ringTimeoutSeconds, () => this.end(call, { status: 'no-answer', cause: 'NO_ANSWER', source: 'Plivo', durationSeconds: 0 }));
    }
    switch (script.kind) {
      case 'busy':
        return this.end(call, { status: 'busy', cause: 'USER_BUSY', source: 'Callee', durationSeconds: 0 });
      case 'failed':
        return this.end(call, { status: 'failed', cause: 'UNALLOCATED_NUMBER', source: 'Error', durationSeconds: 0 });
      case 'timeout':
        if (!script.ringSeconds) return this.end(call, { status: 'timeout', cause: 'RECOVERY_ON_TIMER_EXPIRE', source: 'Plivo', durationSeconds: 0 });
        this.ring(call);
        return this.after(call, script.ringSeconds, () =>
          this.end(call, { status: 'timeout', cause: 'RECOVERY_ON_TIMER_EXPIRE', source: 'Plivo', durationSeconds: 0 }),
        );
      case 'no-answer':
        this.ring(call);
        return this.after(call, script.ringSeconds, () => this.end(call, { status: 'no-answer', cause: 'NO_ANSWER', source: 'Plivo', durationSeconds: 0 }));
      case 'answer':
        this.ring(call);
        return this.after(call, script.answerAfterSeconds, () => {
          this.answer(call, script.hangUpAfterSeconds, script.conversation ?? []);
          this.detectMachine(call, 'human', DEFAULT_DETECT_AFTER_SECONDS);
        });
      case 'machine': {
        this.ring(call);
        const greeting: CallerStep[] = [{ pauseMs: MACHINE_PICKUP_MS }, { say: script.greeting, unprompted: true }, { beep: true, ms: script.beepMs }];
        return this.after(call, script.answerAfterSeconds, () => {
          this.answer(call, script.hangUpAfterSeconds, greeting);
          this.detectMachine(call, script.detection ?? 'machine', script.detectAfterSeconds ?? DEFAULT_DETECT_AFTER_SECONDS);
        });
      }
    }
  }

  /** `DELETE .../Request/{uuid}/`: false unless the call is still queued or ringing. */
  cancel(providerCallId: string): boolean {
    const call = this.live.get(providerCallId);
    if (!call || (call.record.status !== 'queued' && call.record.status !== 'ringing')) return false;
    this.end(call, { status: 'cancel', cause: 'ORIGINATOR_CANCEL', source: 'API Request', durationSeconds: 0 });
    return true;
  }

  /** `DELETE .../Call/{uuid}/`: false unless the call was answered and is still on. */
  hangUp(providerCallId: string): boolean {
    const call = this.live.get(providerCallId);
    if (!call || call.record.status !== 'in-progress' || call.answeredAtMs === null) return false;
    this.end(call, { status: 'completed', cause: 'NORMAL_CLEARING', source: 'API Request', durationSeconds: this.secondsSinceAnswer(call) });
    return true;
  }

  /**
   * `POST .../Call/{uuid}/` with `legs=aleg` (docs/decisions/0160): an answered call leaves its
   * audio stream (closed as Plivo closes it, the call staying up) and follows the XML fetched
   * (POST, signed) from `alegUrl`: a `<Dial>` rings its number, whose callee script decides.
   * False unless the call was answered and is still on.
   */
  transfer(providerCallId: string, alegUrl: string): boolean {
    const call = this.live.get(providerCallId);
    if (!call || call.record.status !== 'in-progress' || call.answeredAtMs === null || call.dial) return false;
    const caller = call.caller;
    call.caller = null;
    void caller?.stop();
    this.notify(call, 'in-progress', alegUrl, { Event: 'Transfer' }, (xml) => this.followTransfer(call, xml));
    return true;
  }

  /** What a transferred call does: a `<Dial>` rings its number; anything else ends the call (nothing left to do). */
  private followTransfer(call: LiveCall, xml: string | null): void {
    if (call.record.status !== 'in-progress' || this.stop.signal.aborted) return;
    const instruction = xml === null ? null : readPlivoXml(xml);
    if (instruction?.kind === 'conference') return this.joinRoom(call, instruction.room);
    if (instruction?.kind !== 'dial') {
      return this.end(call, {
        status: 'completed',
        cause: xml === null ? 'ANSWER_URL_FAILED' : 'NORMAL_CLEARING',
        source: xml === null ? 'Error' : 'Answer XML',
        durationSeconds: this.secondsSinceAnswer(call),
      });
    }
    this.dialOut(call, instruction);
  }

  /**
   * A `<Dial>` of one number from a transferred call: the destination leg rings and plays its
   * callee script (answers after `answerAfterSeconds` unless `timeout` runs out first: no-answer;
   * busy; failed; a machine answers like a person). Answered, the two are bridged (`bridgedWith`)
   * and `callbackUrl` hears `DialAction=answer`; the leg's `hangUpAfterSeconds` (or the dial's
   * `timeLimit`) ends the bridge. The dial's end goes to `action` (`DialStatus`), whose XML the call follows.
   */
  private dialOut(call: LiveCall, dial: Extract<PlivoVerb, { kind: 'dial' }>): void {
    const script = this.callees.get(dial.number) ?? DEFAULT_CALLEE;
    const from = dial.callerId ? (/^\d+$/.test(dial.callerId) ? `+${dial.callerId}` : dial.callerId) : call.record.to;
    const leg = this.track(
      {
        from,
        to: dial.number,
        answerUrl: '',
        ringUrl: null,
        hangupUrl: null,
        timeLimitSeconds: dial.timeLimitSeconds ?? DEFAULT_DIAL_TIME_LIMIT_SECONDS,
        machineDetectionUrl: null,
        direction: 'outbound',
      },
      script,
    );
    leg.record.dialledBy = call.record.providerCallId;
    const progress: DialInProgress = { leg, actionUrl: dial.actionUrl, callbackUrl: dial.callbackUrl, answered: false, done: false };
    call.dial = progress;
    const timeout = dial.timeoutSeconds ?? DEFAULT_DIAL_TIMEOUT_SECONDS;
    const unanswered = (status: 'busy' | 'failed' | 'no-answer' | 'timeout', cause: string) => {
      this.endLeg(leg, { status, cause, source: status === 'no-answer' ? 'Plivo' : 'Callee', durationSeconds: 0 });
      this.finishDial(call, status, cause);
    };
    if (script.kind === 'busy') return unanswered('busy', 'USER_BUSY');
    if (script.kind === 'failed') return unanswered('failed', 'UNALLOCATED_NUMBER');
    if (script.kind === 'timeout') return unanswered('timeout', 'RECOVERY_ON_TIMER_EXPIRE');
    this.moveTo(leg, 'ringing', null, {});
    const answersAfter = script.kind === 'no-answer' ? Infinity : script.answerAfterSeconds;
    if (answersAfter > timeout) return this.after(leg, timeout, () => unanswered('no-answer', 'NO_ANSWER'));
    this.after(leg, answersAfter, () => {
      if (call.record.status !== 'in-progress') return;
      progress.answered = true;
      leg.answeredAtMs = Date.now();
      this.moveTo(leg, 'in-progress', null, {});
      call.record.bridgedWith = leg.record.providerCallId;
      leg.record.bridgedWith = call.record.providerCallId;
      this.notify(call, 'in-progress', progress.callbackUrl, { ...this.dialFields(call, leg), DialAction: 'answer', DialBLegStatus: 'answer' });
      const hangUpAfter = script.kind === 'answer' || script.kind === 'machine' ? script.hangUpAfterSeconds : undefined;
      const bridgeEnds = (cause: string, source: string) => {
        this.endLeg(leg, { status: 'completed', cause, source, durationSeconds: this.secondsSinceAnswer(leg) });
        this.finishDial(call, 'completed', cause);
      };
      if (hangUpAfter !== undefined) this.after(leg, hangUpAfter, () => bridgeEnds('NORMAL_CLEARING', 'Callee'));
      this.after(leg, leg.record.timeLimitSeconds, () => bridgeEnds('ALLOTTED_TIMEOUT', 'Plivo'));
    });
  }

  /** Ends a destination leg (it has no callbacks of its own: its transferred call's dial reports it). */
  private endLeg(leg: LiveCall, ending: Ending): void {
    if (!['queued', 'ringing', 'in-progress'].includes(leg.record.status)) return;
    this.clearTimers(leg);
    leg.markOver();
    leg.record.status = ending.status;
    leg.record.history.push({ status: ending.status, at: new Date() });
    leg.ending = ending;
  }

  /** The dial is over while the transferred call is still on: the leg's hang-up to `callbackUrl`, then `action`, whose XML the call follows. */
  private finishDial(call: LiveCall, dialStatus: string, cause: string): void {
    const progress = call.dial;
    if (!progress || progress.done) return;
    progress.done = true;
    const { leg } = progress;
    if (progress.answered) this.notify(call, 'in-progress', progress.callbackUrl, this.legHangupFields(call, leg));
    const fields: CallbackParams = {
      ...this.dialFields(call, leg),
      DialStatus: dialStatus,
      DialHangupCause: cause,
      DialRingStatus: String(dialStatus !== 'busy' && dialStatus !== 'failed'),
    };
    if (!progress.answered) fields.DialBLegUUID = '';
    if (progress.actionUrl) this.notify(call, 'in-progress', progress.actionUrl, fields, (xml) => this.followDialAction(call, xml));
    else this.end(call, { status: 'completed', cause: 'NORMAL_CLEARING', source: 'Answer XML', durationSeconds: this.secondsSinceAnswer(call) });
  }

  /** After the dial: the action URL's XML; without one to follow (or `<Hangup/>`), the call ends. */
  private followDialAction(call: LiveCall, xml: string | null): void {
    if (call.record.status !== 'in-progress' || this.stop.signal.aborted) return;
    const instruction = xml === null ? null : readPlivoXml(xml);
    if (instruction?.kind === 'dial') {
      call.dial = null;
      return this.dialOut(call, instruction);
    }
    this.end(call, { status: 'completed', cause: 'NORMAL_CLEARING', source: 'Answer XML', durationSeconds: this.secondsSinceAnswer(call) });
  }

  /**
   * `<Conference>` (docs/decisions/0161): the call waits in the named room; a second call in the
   * same room is bridged with it (`bridgedWith` on both). The room ends when one of them leaves
   * (`endConferenceOnExit`, as the service asks): the other is hung up.
   */
  private joinRoom(call: LiveCall, room: string): void {
    call.room = room;
    const other = [...this.live.values()].find((c) => c !== call && c.room === room && c.record.status === 'in-progress');
    if (!other) return;
    call.record.bridgedWith = other.record.providerCallId;
    other.record.bridgedWith = call.record.providerCallId;
  }

  /** A call leaving its room: the room ends, and whoever is still in it is hung up. */
  private leaveRoom(call: LiveCall): void {
    const room = call.room;
    if (!room) return;
    call.room = null;
    for (const other of this.live.values()) {
      if (other.room === room && other.record.status === 'in-progress') {
        other.room = null;
        this.end(other, { status: 'completed', cause: 'NORMAL_CLEARING', source: 'Conference', durationSeconds: this.secondsSinceAnswer(other) });
      }
    }
  }

  /** A call ending with a dial under way: its destination leg goes too (the bridge's hang-up reported first, as Plivo does). */
  private hangUpDial(call: LiveCall): void {
    this.leaveRoom(call);
    const progress = call.dial;
    if (!progress || progress.done) return;
    progress.done = true;
    const { leg } = progress;
    if (progress.answered) {
      this.endLeg(leg, { status: 'completed', cause: 'NORMAL_CLEARING', source: 'Caller', durationSeconds: this.secondsSinceAnswer(leg) });
      this.notify(call, 'in-progress', progress.callbackUrl, this.legHangupFields(call, leg));
    } else this.endLeg(leg, { status: 'cancel', cause: 'ORIGINATOR_CANCEL', source: 'Caller', durationSeconds: 0 });
  }

  private dialFields(call: LiveCall, leg: LiveCall): CallbackParams {
    return {
      Event: 'Dial',
      DialALegUUID: call.record.providerCallId,
      DialBLegUUID: leg.record.providerCallId,
      DialBLegFrom: digitsOf(leg.record.from),
      DialBLegTo: digitsOf(leg.record.to),
    };
  }

  private legHangupFields(call: LiveCall, leg: LiveCall): CallbackParams {
    const ending = leg.ending;
    const seconds = String(Math.round(ending?.durationSeconds ?? this.secondsSinceAnswer(leg)));
    return {
      ...this.dialFields(call, leg),
      DialAction: 'hangup',
      DialBLegStatus: 'hangup',
      DialBLegDuration: seconds,
      DialBLegBillDuration: seconds,
      DialBLegHangupCause: ending?.cause ?? 'NORMAL_CLEARING',
    };
  }

  /** Every call placed, oldest first, as copies. */
  calls(): SimulatedCall[] {
    return [...this.live.values()].map((call) => structuredClone(call.record));
  }

  /** Stops every timer, callback and audio stream; pending callbacks are never sent. */
  async close(): Promise<void> {
    this.stop.abort();
    for (const call of this.live.values()) this.clearTimers(call);
    await Promise.all([...this.live.values()].map((call) => Promise.all([call.deliveries, call.answering, call.caller?.terminate()])));
  }

  /**
   * Plivo's asynchronous answering-machine detection: when the call was created with it, the
   * verdict (`Machine=true|false`, `Event=MachineDetection`) is posted, signed like every
   * callback, to `machine_detection_url` `afterSeconds` into the answered call. `none`: no verdict.
   */
  private detectMachine(call: LiveCall, verdict: 'machine' | 'human' | 'none', afterSeconds: number): void {
    const url = call.record.machineDetectionUrl;
    if (!url || verdict === 'none') return;
    this.after(call, afterSeconds, () => {
      if (call.record.status !== 'in-progress') return;
      this.notify(call, 'in-progress', url, { Event: 'MachineDetection', Machine: verdict === 'machine' ? 'true' : 'false', IfMachine: 'continue' });
    });
  }

  /**
   * The ring is a notification sent on its own: the answer request does not wait for it to be
   * taken, as in Plivo's own call engine (plivoframework, src/plivo/rest/freeswitch/inboundsocket.py,
   * on_channel_progress: `spawn_raw(self.send_to_url, ring_url, params)`).
   */
  private ring(call: LiveCall): void {
    this.moveTo(call, 'ringing', call.record.ringUrl, { Event: 'Ring' }, 'alone');
  }

  private answer(call: LiveCall, hangUpAfterSeconds: number | undefined, conversation: CallerStep[]): void {
    // The answer request is the in-progress callback, and its answer the XML the call follows.
    this.moveTo(call, 'in-progress', call.record.answerUrl, { Event: 'StartApp' }, (xml) => this.follow(call, xml, conversation));
    this.startTalkTime(call, hangUpAfterSeconds);
  }

  /** From the answer on: the caller's own hang-up, if scripted, and the time limit, whichever comes first. */
  private startTalkTime(call: LiveCall, hangUpAfterSeconds: number | undefined): void {
    call.answeredAtMs = Date.now();
    const limit = call.record.timeLimitSeconds;
    // Whichever comes first ends the call; ending clears the other timer.
    if (hangUpAfterSeconds !== undefined) {
      this.after(call, hangUpAfterSeconds, () =>
        this.end(call, { status: 'completed', cause: 'NORMAL_CLEARING', source: 'Callee', durationSeconds: hangUpAfterSeconds }),
      );
    }
    this.after(call, limit, () => this.end(call, { status: 'completed', cause: 'ALLOTTED_TIMEOUT', source: 'Plivo', durationSeconds: limit }));
  }

  /** Does what the answer XML says; `xml` is null when the answer URL could not be fetched. */
  private follow(call: LiveCall, xml: string | null, conversation: CallerStep[]): void {
    if (call.record.status !== 'in-progress' || this.stop.signal.aborted) return;
    const instruction = xml === null ? null : readPlivoXml(xml);
    const endNow = (cause: string, source: string) => this.end(call, { status: 'completed', cause, source, durationSeconds: this.secondsSinceAnswer(call) });
    // Plivo hangs up a call whose answer it cannot get, and one with nothing left to do.
    if (xml === null) return endNow('ANSWER_URL_FAILED', 'Error');
    // An answer that is no XML at all comes from a receiver that only takes statuses (tests of
    // the callbacks themselves): the simulator lets the callee's script run on, unlike Plivo.
    if (instruction === null) return;
    if (instruction.kind !== 'stream') return endNow('NORMAL_CLEARING', 'Answer XML');
    this.connect(call, instruction.url, conversation);
  }

  /**
   * Does what an inbound call's answer XML says: a stream answers the call and connects the
   * caller; anything else (or no answer at all) ends it unanswered.
   */
  private followInbound(call: LiveCall, xml: string | null): void {
    if (call.record.status !== 'ringing' || this.stop.signal.aborted) return;
    const instruction = xml === null ? null : readPlivoXml(xml);
    if (instruction?.kind !== 'stream') {
      const cause =
        xml === null ? 'ANSWER_URL_FAILED' : instruction?.kind === 'hangup' && instruction.reason === 'rejected' ? 'CALL_REJECTED' : 'NORMAL_CLEARING';
      return this.end(call, { status: xml === null ? 'failed' : 'completed', cause, source: xml === null ? 'Error' : 'Answer XML', durationSeconds: 0 });
    }
    const script = call.script.kind === 'answer' ? call.script : { hangUpAfterSeconds: undefined, conversation: undefined };
    // Plivo posts no callback when it answers an inbound call: the answer URL already knows.
    this.moveTo(call, 'in-progress', null, {});
    this.startTalkTime(call, script.hangUpAfterSeconds);
    this.connect(call, instruction.url, script.conversation ?? []);
  }

  /** The caller's side of the call's audio stream, talking and listening through it. */
  private connect(call: LiveCall, url: string, conversation: CallerStep[]): void {
    const endNow = (cause: string, source: string) => this.end(call, { status: 'completed', cause, source, durationSeconds: this.secondsSinceAnswer(call) });
    const { record } = call;
    call.caller = new SimulatedCaller({
      url,
      providerCallId: record.providerCallId,
      accountId: this.options.accountId,
      steps: conversation,
      record,
      legDelayMs: this.options.legDelayMs ?? 0,
      onHangUp: () => this.end(call, { status: 'completed', cause: 'NORMAL_CLEARING', source: 'Callee', durationSeconds: this.secondsSinceAnswer(call) }),
      onStreamEnded: () => endNow('NORMAL_CLEARING', 'Answer XML'),
    });
  }

  private end(call: LiveCall, ending: Ending): void {
    if (!['queued', 'ringing', 'in-progress'].includes(call.record.status)) return;
    this.clearTimers(call);
    call.markOver();
    void call.caller?.stop();
    this.hangUpDial(call);
    this.moveTo(call, ending.status, call.record.hangupUrl, {
      Event: 'Hangup',
      Duration: String(Math.round(ending.durationSeconds)),
      BillDuration: String(Math.round(ending.durationSeconds)),
      HangupCause: ending.cause,
      HangupSource: ending.source,
    });
  }

  /** `then` as notify takes it. */
  private moveTo(call: LiveCall, status: PlivoCallStatus, url: string | null, fields: CallbackParams, then?: AfterCallback): void {
    const { record } = call;
    record.status = status;
    record.history.push({ status, at: new Date() });
    this.notify(call, status, url, fields, then);
  }

  /**
   * Posts the call's `status` to `url` (none when null), after the call's earlier callbacks;
   * `then` a function: it gets the answer's body once delivered (null when it was not);
   * `then` 'alone': posted at once, and nothing waits for it.
   */
  private notify(call: LiveCall, status: PlivoCallStatus, url: string | null, fields: CallbackParams, then?: AfterCallback): void {
    const { record } = call;
    const answered = typeof then === 'function' ? then : undefined;
    if (!url) return;
    // RequestUUID is the id call creation answers with: an inbound call has none.
    const ids: CallbackParams =
      record.direction === 'outbound' ? { CallUUID: record.providerCallId, RequestUUID: record.providerCallId } : { CallUUID: record.providerCallId };
    const params: CallbackParams = { ...ids, CallStatus: status, From: digitsOf(record.from), To: digitsOf(record.to), Direction: record.direction, ...fields };
    const delivery: CallbackDelivery = { status, url, attempts: 0, delivered: false, sentAt: null, deliveredAt: null };
    record.callbacks.push(delivery);
    const timeoutMs = answered ? ANSWER_TIMEOUT_MS : CALLBACK_TIMEOUT_MS;
    if (then === 'alone') {
      void this.deliver(delivery, params, timeoutMs);
      return;
    }
    call.deliveries = call.deliveries.then(async () => {
      if (!answered) {
        await this.deliver(delivery, params, timeoutMs);
        return;
      }
      // The answer may be held a while (our API waits for a media node). A call that ends
      // meanwhile reports its end at once, as Plivo does; the answer, when it comes, is moot.
      call.answering = this.deliver(delivery, params, timeoutMs).then(answered);
      await Promise.race([call.answering, call.over]);
    });
  }

  /**
   * Posts a callback; one the receiver does not take with a 2xx is retried once, then dropped.
   * Answers the body of the answer that took it, or null.
   */
  private async deliver(delivery: CallbackDelivery, params: CallbackParams, timeoutMs: number): Promise<string | null> {
    try {
      for (let attempt = 1; attempt <= 2; attempt++) {
        if (attempt > 1) await sleep(CALLBACK_RETRY_SECONDS * 1000 * this.options.timeScale, undefined, { signal: this.stop.signal });
        delivery.attempts = attempt;
        delivery.sentAt ??= new Date();
        const body = await this.post(delivery.url, params, timeoutMs);
        if (body !== null) {
          delivery.delivered = true;
          delivery.deliveredAt = new Date();
          return body;
        }
      }
    } catch {
      // The simulator was closed while waiting to retry: the callback is dropped.
    }
    return null;
  }

  /** The body of a 2xx answer, or null. */
  private async post(url: string, params: CallbackParams, timeoutMs: number): Promise<string | null> {
    if (this.stop.signal.aborted) return null;
    const nonce = randomBytes(10).toString('hex');
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          [NONCE_HEADER]: nonce,
          [SIGNATURE_HEADER]: plivoSignature(this.options.authToken, 'POST', url, params, nonce),
        },
        body: new URLSearchParams(params).toString(),
        signal: AbortSignal.any([this.stop.signal, AbortSignal.timeout(timeoutMs)]),
        redirect: 'manual',
      });
      const body = await res.text();
      return res.ok ? body : null;
    } catch {
      return null;
    }
  }

  /** Simulated seconds since the answer, as the hang-up callback's `Duration` says. */
  private secondsSinceAnswer(call: LiveCall): number {
    return call.answeredAtMs === null ? 0 : Math.round((Date.now() - call.answeredAtMs) / 1000 / this.options.timeScale);
  }

  private after(call: LiveCall, seconds: number, run: () => void): void {
    const timer = setTimeout(
      () => {
        call.timers.delete(timer);
        run();
      },
      seconds * 1000 * this.options.timeScale,
    );
    call.timers.add(timer);
  }

  private clearTimers(call: LiveCall): void {
    for (const timer of call.timers) clearTimeout(timer);
    call.timers.clear();
  }
}

function digitsOf(e164: string): string {
  return e164.replace(/^\+/, '');
}
