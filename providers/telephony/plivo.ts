import { DialRefusedError, ProviderUnavailableError } from '../errors';
import { getJson, okBody, type JsonAnswer } from '../http-json';
import { MAX_PAGE_SIZE, type NewCall, type NumberPage, type NumberQuery, type PlacedCall, type ProviderNumber, type Telephony } from './types';

export interface PlivoOptions {
  /** `https://api.plivo.com` in production; a simulator's URL locally. */
  baseUrl: string;
  authId: string;
  authToken: string;
  timeoutMs: number;
}

/** A rented number as Plivo's Number resource describes it (the fields we read). */
interface PlivoNumber {
  number: string;
  region?: string;
  number_type?: string;
  voice_enabled?: boolean;
}

interface PlivoList {
  meta: { limit: number; offset: number; next: string | null; total_count: number };
  objects: PlivoNumber[];
}

/** Plivo's answer to a call it accepted (`201`). */
interface PlivoCallFired {
  message?: string;
  request_uuid?: unknown;
}

const SERVICE = 'telephony';

/**
 * 4xx answers that say nothing about the call itself: our credentials or account path are
 * wrong, or Plivo wants us to slow down. They are the provider being unusable, not a refusal.
 */
const NOT_A_REFUSAL = new Set([401, 403, 404, 408, 429]);

/**
 * Plivo's REST API with HTTP Basic auth (auth id, auth token): the Number resource (the
 * account's rented numbers: the list at `GET /v1/Account/{auth_id}/Number/`, one number at
 * `.../Number/{number}/`) and the Call resource (`POST .../Call/` places a call,
 * `DELETE .../Request/{uuid}/` cancels one still ringing, `DELETE .../Call/{uuid}/` hangs up
 * an answered one, `POST .../Call/{uuid}/` with `legs=aleg` transfers one to new XML). Plivo writes numbers as digits without `+`; this adapter speaks E.164
 * to the rest of the service.
 */
export class PlivoTelephony implements Telephony {
  constructor(private readonly options: PlivoOptions) {}

  async listNumbers(query: NumberQuery): Promise<NumberPage> {
    const params = new URLSearchParams({ limit: String(Math.min(query.limit, MAX_PAGE_SIZE)), offset: String(query.offset), services: 'voice' });
    if (query.startsWith) params.set('number_startswith', query.startsWith);
    const body = okBody(SERVICE, await this.get(`Number/?${params}`)) as Partial<PlivoList>;
    if (!Array.isArray(body.objects) || typeof body.meta !== 'object' || body.meta === null) {
      throw new ProviderUnavailableError(SERVICE, 'answered a number list without meta and objects');
    }
    return { numbers: body.objects.map(toProviderNumber), nextOffset: body.meta.next ? body.meta.offset + body.meta.limit : null };
  }

  async getNumber(number: string): Promise<ProviderNumber | null> {
    const answer = await this.get(`Number/${encodeURIComponent(digitsOf(number))}/`);
    if (answer.status === 404) return null;
    const body = okBody(SERVICE, answer) as Partial<PlivoNumber>;
    if (typeof body.number !== 'string') throw new ProviderUnavailableError(SERVICE, 'answered a number without `number`');
    return toProviderNumber(body as PlivoNumber);
  }

  async createCall(call: NewCall): Promise<PlacedCall> {
    const answer = await this.send('POST', 'Call/', {
      from: digitsOf(call.from),
      to: digitsOf(call.to),
      answer_url: call.answerUrl,
      answer_method: 'POST',
      ring_url: call.ringUrl,
      hangup_url: call.hangupUrl,
      time_limit: call.timeLimitSeconds,
      ...(call.ringTimeoutSeconds !== undefined ? { ring_timeout: call.ringTimeoutSeconds } : {}),
      // Asynchronous detection: `true` (not `hangup`) lets the call go on; the verdict goes to the URL.
      ...(call.machineDetection && {
        machine_detection: 'true',
        machine_detection_url: call.machineDetection.url,
        machine_detection_method: 'POST',
        machine_detection_time: call.machineDetection.timeMs,
      }),
    });
    if (answer.status >= 400 && answer.status <= 499 && !NOT_A_REFUSAL.has(answer.status)) {
      throw new DialRefusedError(SERVICE, plivoError(answer));
    }
    const body = okBody(SERVICE, answer) as PlivoCallFired | null;
    if (typeof body?.request_uuid !== 'string' || body.request_uuid === '') {
      throw new ProviderUnavailableError(SERVICE, `answered ${answer.status} without request_uuid`);
    }
    return { providerCallId: body.request_uuid };
  }

  async hangupCall(providerCallId: string): Promise<void> {
    const id = encodeURIComponent(providerCallId);
    // Plivo holds a call it has not connected yet as a call request, and an answered one as
    // a call. Asking in this order cannot miss a call answered between the two requests: a
    // call only ever moves from request to call. 404 from both: the call is already over.
    for (const resource of [`Request/${id}/`, `Call/${id}/`]) {
      const answer = await this.send('DELETE', resource);
      if (answer.status === 404) continue;
      okBody(SERVICE, answer);
      return;
    }
  }

  async transferCall(providerCallId: string, alegUrl: string): Promise<boolean> {
    const answer = await this.send('POST', `Call/${encodeURIComponent(providerCallId)}/`, { legs: 'aleg', aleg_url: alegUrl, aleg_method: 'POST' });
    if (answer.status === 404) return false;
    okBody(SERVICE, answer);
    return true;
  }

  private get(resource: string) {
    const { timeoutMs } = this.options;
    return getJson({ service: SERVICE, url: this.urlOf(resource), headers: this.authorization(), timeoutMs });
  }

  /**
   * A JSON request with a body or none, answered with any status. Plivo answers a hang-up
   * with an empty 204, which getJson would take for a broken answer; a body that is not
   * JSON is returned as null for the caller to judge.
   */
  private async send(method: 'POST' | 'DELETE', resource: string, body?: object): Promise<JsonAnswer> {
    const { timeoutMs } = this.options;
    const headers: Record<string, string> = { Accept: 'application/json', ...this.authorization() };
    if (body) headers['Content-Type'] = 'application/json';
    try {
      const res = await fetch(this.urlOf(resource), {
        method,
        headers,
        body: body && JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
      return { status: res.status, body: parseJsonOrNull(await res.text()) };
    } catch (err) {
      const error = err as Error & { cause?: { code?: string } };
      if (error.name === 'TimeoutError' || error.name === 'AbortError') throw new ProviderUnavailableError(SERVICE, `no answer within ${timeoutMs} ms`);
      throw new ProviderUnavailableError(SERVICE, error.cause?.code ? `connection failed: ${error.cause.code}` : 'connection failed');
    }
  }

  private urlOf(resource: string): string {
    return `${this.options.baseUrl}/v1/Account/${encodeURIComponent(this.options.authId)}/${resource}`;
  }

  private authorization(): Record<string, string> {
    const { authId, authToken } = this.options;
    return { Authorization: `Basic ${Buffer.from(`${authId}:${authToken}`).toString('base64')}` };
  }
}

/** Plivo's `error` (a sentence, or per-field messages) of a refusal. */
function plivoError(answer: JsonAnswer): string {
  const error = (answer.body as { error?: unknown } | null)?.error;
  if (typeof error === 'string' && error !== '') return error;
  return error === undefined ? `answered ${answer.status}` : JSON.stringify(error);
}

function parseJsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function toProviderNumber(n: PlivoNumber): ProviderNumber {
  return { number: `+${digitsOf(n.number)}`, region: n.region ?? '', numberType: n.number_type ?? '', voiceEnabled: n.voice_enabled === true };
}

function digitsOf(number: string): string {
  return number.replace(/^\+/, '');
}
