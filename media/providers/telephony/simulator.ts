import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { basicCredentials, startSimulatedService, type RunningSimulator, type SimulatorOptions } from '../simulated-service';
import { MAX_PAGE_SIZE } from './types';

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
}

export interface TelephonySimulator extends RunningSimulator {
  authId: string;
  authToken: string;
  /** Rents one more number to the simulated account. */
  addNumber(e164: string, fields?: Partial<Omit<SimulatedNumber, 'number'>>): void;
}

export const SIMULATOR_AUTH_ID = 'MASIMULATOR000000000';
export const SIMULATOR_AUTH_TOKEN = 'simulator-auth-token';

/** The numbers `npm start`'s simulator rents when none are given: +91 80 4718 0001 to 0025. */
export const DEFAULT_SIMULATED_NUMBERS = Array.from({ length: 25 }, (_, i) => `+918047180${String(i + 1).padStart(3, '0')}`);

/**
 * A stand-in for Plivo's REST API on loopback: the Number resource (list with `limit`,
 * `offset`, `number_startswith`, `services`; one number; 404 for a number the account does
 * not rent) with HTTP Basic auth, over an in-memory inventory, in Plivo's JSON shapes.
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
  const prefix = `/v1/Account/${authId}/Number/`;

  const simulator = await startSimulatedService((req, url) => {
    if (!authorized(req, authId, authToken)) return { status: 401, body: { api_id: randomUUID(), error: 'authentication failed' } };
    if (req.method !== 'GET' || !url.pathname.startsWith(prefix)) return { status: 404, body: { api_id: randomUUID(), error: 'not found' } };
    const rest = url.pathname.slice(prefix.length);
    if (rest === '') return listNumbers(inventory, url, prefix);
    const found = inventory.get(decodeURIComponent(rest.replace(/\/$/, '')));
    if (!found) return { status: 404, body: { api_id: randomUUID(), error: 'not found' } };
    return { status: 200, body: { api_id: randomUUID(), ...resource(found, prefix) } };
  }, options);
  return Object.assign(simulator, { authId, authToken, addNumber });
}

function authorized(req: IncomingMessage, authId: string, authToken: string): boolean {
  const credentials = basicCredentials(req);
  return credentials?.user === authId && credentials.password === authToken;
}

function listNumbers(inventory: Map<string, SimulatedNumber>, url: URL, prefix: string) {
  const limit = Number(url.searchParams.get('limit') ?? MAX_PAGE_SIZE);
  const offset = Number(url.searchParams.get('offset') ?? 0);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE || !Number.isInteger(offset) || offset < 0) {
    return { status: 400, body: { api_id: randomUUID(), error: `limit must be 1 to ${MAX_PAGE_SIZE} and offset at least 0` } };
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
      objects: matching.slice(offset, offset + limit).map((n) => resource(n, prefix)),
    },
  };
}

function resource(n: SimulatedNumber, prefix: string) {
  return { ...n, active: true, alias: '', application: null, carrier: 'Plivo', monthly_rental_rate: '0.80000', sms_enabled: false, type: n.number_type, resource_uri: `${prefix}${n.number}/` };
}
