import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { basicCredentials, startSimulatedService, type RunningSimulator, type SimulatorAnswer, type SimulatorOptions } from '../simulated-service';
import { SimulatedCalls, type CalleeScript, type InboundCallerScript, type SimulatedCall } from './simulated-calls';

export { DEFAULT_CALLEE, type CalleeScript, type CallerStep, type InboundCallerScript, type SimulatedCall } from './simulated-calls';

/** A number of the simulated account, as Plivo's Number resource shows it. */
export interface SimulatedNumber {
  /** Digits without `+`, as Plivo writes numbers. */
  number: string;
  region: string;
  number_type: string;
  voice_enabled: boolean;
}

export interface TelephonySimulatorOptions extends SimulatorOptions {
  authId?: string;
  authToken?: string;
  /** The account's rented numbers, E.164 (default: 25 Bangalore numbers). */
  numbers?: string[];
  /** What the callee at a number (E.164) does when dialled; DEFAULT_CALLEE at the others. */
  callees?: Record<string, CalleeScript>;
  /** Multiplies every delay of a call (default 1); tests run calls faster with less. */
  timeScale?: number;
  /** One-way network delay of every stream frame between the callee and the provider (default 0; see `setLegDelay`). */
  legDelayMs?: number;
  /** The account's application (see `setInboundUrls`): where calls to its numbers are announced. */
  inboundAnswerUrl?: string;
  inboundHangupUrl?: string;
}

/** The URLs of the Plivo application the account's numbers use for the calls made to them. */
export interface InboundUrls {
  /** Asked (POST) what to do when someone dials one of the numbers. */
  answerUrl: string;
  /** Told (POST) when such a call ends; none when null. */
  hangupUrl: string | null;
}

export interface InboundDial {
  /** The caller's number, E.164. */
  from: string;
  /** One of the account's numbers, E.164. */
  to: string;
  /** What the caller does once answered (default: stays silent until we hang up). */
  caller?: InboundCallerScript;
}

export interface TelephonySimulator extends RunningSimulator {
  authId: string;
  authToken: string;
  /** Rents one more number to the simulated account. */
  addNumber(e164: string, fields?: Partial<Omit<SimulatedNumber, 'number'>>): void;
  /** Sets what the callee at `e164` does on the calls placed from now on. */
  setCallee(e164: string, script: CalleeScript): void;
  /** The one-way network delay of the audio streams opened from now on: each frame takes this long each way. */
  setLegDelay(ms: number): void;
  /** Points the calls to the account's numbers at these URLs, as a Plivo application does. */
  setInboundUrls(urls: InboundUrls): void;
  /**
   * A caller dials one of the account's numbers: the call rings, the application's answer URL
   * says what to do, and a call answered with a stream talks through it (see
   * SimulatedCalls.dialIn). Throws for a number the account does not rent, or without an
   * answer URL. Answers the call as it starts; `calls()` shows how it goes on.
   */
  dialInbound(dial: InboundDial): SimulatedCall;
  /** Every call placed or received, oldest first, with its status history and callbacks. */
  calls(): SimulatedCall[];
}

export const SIMULATOR_AUTH_ID = 'MASIMULATOR000000000';
export const SIMULATOR_AUTH_TOKEN = 'simulator-auth-token';

/** The numbers `npm start`'s simulator rents when none are given: +91 80 4718 0001 to 0025. */
export const DEFAULT_SIMULATED_NUMBERS = Array.from({ length: 25 }, (_, i) => `+918047180${String(i + 1).padStart(3, '0')}`);

/** Plivo's `time_limit` when the request has none, and the most it takes: 4 and 24 hours. */
const DEFAULT_TIME_LIMIT_SECONDS = 14_400;
const MAX_TIME_LIMIT_SECONDS = 86_400;

type Answer = SimulatorAnswer;

/** Plivo pages its lists by at most 20 objects (`limit`, 1 to 20: docs.plivo.com "List all numbers"). */
const MAX_PAGE_SIZE = 20;

/**
 * A stand-in for Plivo's REST API on loopback, with HTTP Basic auth and Plivo's JSON shapes:
 * - the Number resource over an in-memory inventory (list with `limit`, `offset`,
 *   `number_startswith`, `services`; one number; 404 for a number the account does not rent);
 * - calls to the account's numbers (`dialInbound`), announced to the application's answer URL
 *   and, once answered with a stream, played by a scripted caller;
 * - the Call resource: `POST .../Call/` places a call from a number of the account that plays
 *   the callee's script and posts signed status callbacks; an answered call follows the XML
 *   of its answer URL, and a callee with a `conversation` talks and listens through the
 *   bidirectional audio stream it asks for (see ./simulated-calls.ts, ./simulated-caller.ts);
 *   `DELETE .../Request/{uuid}/` cancels a call still ringing and `DELETE .../Call/{uuid}/`
 *   hangs up an answered one (204, or 404 for a call not in that state).
 */
export async function startTelephonySimulator(options: TelephonySimulatorOptions = {}): Promise<TelephonySimulator> {
  const authId = options.authId ?? SIMULATOR_AUTH_ID;
  const authToken = options.authToken ?? SIMULATOR_AUTH_TOKEN;
  const inventory = new Map<string, SimulatedNumber>();
  const addNumber = (e164: string, fields: Partial<Omit<SimulatedNumber, 'number'>> = {}) => {
    const number = e164.replace(/^\+/, '');
    inventory.set(number, { number, region: 'Bangalore, INDIA', number_type: 'local', voice_enabled: true, ...fields });
  };
  (options.numbers ?? DEFAULT_SIMULATED_NUMBERS).forEach((n) => addNumber(n));
  const calls = new SimulatedCalls({
    authToken,
    accountId: authId,
    timeScale: options.timeScale ?? 1,
    callees: options.callees ?? {},
    legDelayMs: options.legDelayMs ?? 0,
  });
  let inbound: InboundUrls | null = options.inboundAnswerUrl ? { answerUrl: options.inboundAnswerUrl, hangupUrl: options.inboundHangupUrl ?? null } : null;
  const dialInbound = ({ from, to, caller = {} }: InboundDial): SimulatedCall => {
    if (!inventory.has(to.replace(/^\+/, ''))) throw new Error(`${to} is not a number of this account`);
    if (!inbound) throw new Error('no inbound answer URL: call setInboundUrls first');
    return calls.dialIn({ from, to, answerUrl: inbound.answerUrl, hangupUrl: inbound.hangupUrl, timeLimitSeconds: DEFAULT_TIME_LIMIT_SECONDS }, caller);
  };
  const account = `/v1/Account/${authId}/`;
  const numbersPrefix = `${account}Number/`;

  const simulator = await startSimulatedService(
    (req, url, body) => {
      if (!authorized(req, authId, authToken)) return { status: 401, body: { api_id: randomUUID(), error: 'authentication failed' } };
      const match = url.pathname.startsWith(account) ? /^(\w+)\/(?:([^/]+)\/?)?$/.exec(url.pathname.slice(account.length)) : null;
      const [resource, id] = match ? [match[1], match[2] && decodeURIComponent(match[2])] : [];
      if (req.method === 'GET' && resource === 'Number') {
        if (!id) return listNumbers(inventory, url, numbersPrefix);
        const found = inventory.get(id);
        return found ? { status: 200, body: { api_id: randomUUID(), ...numberResource(found, numbersPrefix) } } : notFound();
      }
      if (req.method === 'POST' && resource === 'Call' && !id) return createCall(calls, inventory, body);
      if (req.method === 'DELETE' && resource === 'Call' && id) return calls.hangUp(id) ? { status: 204 } : notFound();
      if (req.method === 'POST' && resource === 'Call' && id) return transferCall(calls, id, body);
      if (req.method === 'DELETE' && resource === 'Request' && id) return calls.cancel(id) ? { status: 204 } : notFound();
      return notFound();
    },
    options,
    () => calls.close(),
  );
  return Object.assign(simulator, {
    authId,
    authToken,
    addNumber,
    setCallee: calls.setCallee.bind(calls),
    setLegDelay: calls.setLegDelay.bind(calls),
    setInboundUrls: (urls: InboundUrls) => {
      inbound = { ...urls };
    },
    dialInbound,
    calls: calls.calls.bind(calls),
  });
}

function authorized(req: IncomingMessage, authId: string, authToken: string): boolean {
  const credentials = basicCredentials(req);
  return credentials?.user === authId && credentials.password === authToken;
}

function notFound(): Answer {
  return { status: 404, body: { api_id: randomUUID(), error: 'not found' } };
}

function refused(error: string): Answer {
  return { status: 400, body: { api_id: randomUUID(), error } };
}

function listNumbers(inventory: Map<string, SimulatedNumber>, url: URL, prefix: string): Answer {
  const limit = Number(url.searchParams.get('limit') ?? MAX_PAGE_SIZE);
  const offset = Number(url.searchParams.get('offset') ?? 0);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE || !Number.isInteger(offset) || offset < 0) {
    return refused(`limit must be 1 to ${MAX_PAGE_SIZE} and offset at least 0`);
  }
  const startsWith = url.searchParams.get('number_startswith') ?? '';
  const voiceOnly = (url.searchParams.get('services') ?? '').split(',').includes('voice');
  const matching = [...inventory.values()].filter((n) => n.number.startsWith(startsWith) && (!voiceOnly || n.voice_enabled));
  const next = offset + limit < matching.length ? `${prefix}?limit=${limit}&offset=${offset + limit}` : null;
  const previous = offset > 0 ? `${prefix}?limit=${limit}&offset=${Math.max(0, offset - limit)}` : null;
  return {
    status: 200,
    body: {
      api_id: randomUUID(),
      meta: { limit, offset, next, previous, total_count: matching.length },
      objects: matching.slice(offset, offset + limit).map((n) => numberResource(n, prefix)),
    },
  };
}

function numberResource(n: SimulatedNumber, prefix: string) {
  return {
    ...n,
    active: true,
    alias: '',
    application: null,
    carrier: 'Plivo',
    monthly_rental_rate: '0.80000',
    sms_enabled: false,
    type: n.number_type,
    resource_uri: `${prefix}${n.number}/`,
  };
}

/** `POST .../Call/` with Plivo's JSON fields; the callbacks go out with POST only. */
function createCall(calls: SimulatedCalls, inventory: Map<string, SimulatedNumber>, text: string): Answer {
  const body = parseObject(text);
  if (!body) return refused('the body must be a JSON object');
  const { from, to, answer_url, answer_method, ring_url, hangup_url, time_limit, ring_timeout } = body;
  if (ring_timeout !== undefined && (!Number.isInteger(ring_timeout) || (ring_timeout as number) < 1))
    return refused('ring_timeout must be a positive number of seconds');
  if (typeof from !== 'string' || !inventory.has(from)) return refused(`from ${String(from)} is not a number of this account`);
  if (typeof to !== 'string' || !/^\d{8,15}$/.test(to)) return refused(`to ${String(to)} is not a number Plivo can dial`);
  if (!isHttpUrl(answer_url)) return refused('answer_url must be an http(s) URL');
  if (answer_method !== undefined && answer_method !== 'POST') return refused('the simulator calls answer_url with POST only');
  if ((ring_url !== undefined && !isHttpUrl(ring_url)) || (hangup_url !== undefined && !isHttpUrl(hangup_url)))
    return refused('ring_url and hangup_url must be http(s) URLs');
  // Answering-machine detection (asynchronous: the call goes on, the verdict is posted to the URL).
  const { machine_detection, machine_detection_url, machine_detection_method, machine_detection_time } = body;
  if (machine_detection !== undefined && machine_detection !== 'true' && machine_detection !== 'hangup')
    return refused('machine_detection must be true or hangup');
  if (machine_detection === 'hangup') return refused('the simulator supports machine_detection true only');
  if (machine_detection !== undefined && !isHttpUrl(machine_detection_url)) return refused('machine_detection_url must be an http(s) URL');
  if (machine_detection_method !== undefined && machine_detection_method !== 'POST') return refused('the simulator calls machine_detection_url with POST only');
  if (
    machine_detection_time !== undefined &&
    (!Number.isInteger(machine_detection_time) || (machine_detection_time as number) < 2000 || (machine_detection_time as number) > 10000)
  )
    return refused('machine_detection_time must be 2000 to 10000 ms');
  const timeLimit = time_limit ?? DEFAULT_TIME_LIMIT_SECONDS;
  if (!Number.isInteger(timeLimit) || (timeLimit as number) < 1 || (timeLimit as number) > MAX_TIME_LIMIT_SECONDS)
    return refused(`time_limit must be 1 to ${MAX_TIME_LIMIT_SECONDS} seconds`);
  const call = calls.place({
    from: `+${from}`,
    to: `+${to}`,
    answerUrl: answer_url,
    ringUrl: ring_url ?? null,
    hangupUrl: hangup_url ?? null,
    timeLimitSeconds: timeLimit as number,
    machineDetectionUrl: machine_detection === 'true' ? (machine_detection_url as string) : null,
    ...(ring_timeout !== undefined ? { ringTimeoutSeconds: ring_timeout as number } : {}),
  });
  return {
    status: 201,
    body: { api_id: randomUUID(), message: 'call fired', request_uuid: call.providerCallId },
    afterAnswer: () => calls.start(call.providerCallId),
  };
}

/**
 * `POST .../Call/{uuid}/`: Plivo's transfer of a live call (docs/decisions/0160), the A leg only:
 * `legs=aleg`, `aleg_url` (fetched with POST, its XML followed). 202, or 404 for a call not answered and on.
 */
function transferCall(calls: SimulatedCalls, id: string, text: string): Answer {
  const body = parseObject(text);
  if (!body) return refused('the body must be a JSON object');
  const { legs, aleg_url, aleg_method } = body;
  if (legs !== 'aleg') return refused('the simulator transfers legs=aleg only');
  if (!isHttpUrl(aleg_url)) return refused('aleg_url must be an http(s) URL');
  if (aleg_method !== undefined && aleg_method !== 'POST') return refused('the simulator calls aleg_url with POST only');
  return calls.transfer(id, aleg_url) ? { status: 202, body: { api_id: randomUUID(), message: 'call transferred' } } : notFound();
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}
