import { ProviderUnavailableError } from '../errors';
import { getJson, okBody } from '../http-json';
import { MAX_PAGE_SIZE, type NumberPage, type NumberQuery, type ProviderNumber, type Telephony } from './types';

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

const SERVICE = 'telephony';

/**
 * Plivo's REST API, its Number resource (the account's rented numbers): the
 * list at `GET /v1/Account/{auth_id}/Number/` and one number at
 * `.../Number/{number}/`, with HTTP Basic auth (auth id, auth token). Plivo writes numbers
 * as digits without `+`; this adapter speaks E.164 to the rest of the service.
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

  private get(resource: string) {
    const { baseUrl, authId, authToken, timeoutMs } = this.options;
    return getJson({
      service: SERVICE,
      url: `${baseUrl}/v1/Account/${encodeURIComponent(authId)}/${resource}`,
      headers: { Authorization: `Basic ${Buffer.from(`${authId}:${authToken}`).toString('base64')}` },
      timeoutMs,
    });
  }
}

function toProviderNumber(n: PlivoNumber): ProviderNumber {
  return { number: `+${digitsOf(n.number)}`, region: n.region ?? '', numberType: n.number_type ?? '', voiceEnabled: n.voice_enabled === true };
}

function digitsOf(number: string): string {
  return number.replace(/^\+/, '');
}
