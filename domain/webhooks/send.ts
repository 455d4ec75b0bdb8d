import { isRedirect, sendGuarded, type GuardOptions } from '../../providers/net/guarded-request';
import { signatureHeader } from './signing';

/** Contract: the target must answer 2xx within 10 seconds. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** What is kept of the target's answer (the rest is not downloaded beyond the read limit). */
export const RESPONSE_EXCERPT_CHARS = 2000;
const RESPONSE_READ_LIMIT_BYTES = 16 * 1024;
const USER_AGENT = 'Service-Webhooks/1.0';

export interface WebhookRequest {
  url: string;
  /** The exact JSON text to send; the signature covers these bytes. */
  rawBody: string;
  eventType: string;
  deliveryId: string;
  secret: string;
  /** When the attempt is signed (the signature's `t`). */
  now: Date;
  timeoutMs?: number;
}

export interface WebhookResponse {
  ok: boolean;
  /** The target's status; null when no answer arrived. */
  status_code: number | null;
  latency_ms: number;
  /** Why the attempt failed, for people; null on success. */
  error: string | null;
  response_excerpt: string;
  /** The signature's `t` (unix seconds). */
  signed_at: number;
}

/**
 * One signed POST of a delivery, with the contract's headers and a fresh `t`. A 2xx is
 * success; a 3xx is a failure (redirects are not followed), as is any other status, a timeout
 * or a connection error. Never throws for anything the target does.
 */
export async function postWebhook(request: WebhookRequest, guard: GuardOptions): Promise<WebhookResponse> {
  const started = performance.now();
  const signedAt = Math.floor(request.now.getTime() / 1000);
  const result = (fields: Pick<WebhookResponse, 'ok' | 'status_code' | 'error'> & { response_excerpt?: string }): WebhookResponse => ({
    response_excerpt: '',
    ...fields,
    latency_ms: Math.round(performance.now() - started),
    signed_at: signedAt,
  });
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return result({ ok: false, status_code: null, error: `not a valid URL: ${request.url}` });
  }
  const timeoutMs = request.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const outcome = await sendGuarded(
    {
      method: 'POST',
      url,
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-event': request.eventType,
        'x-service-delivery': request.deliveryId,
        'x-service-signature': signatureHeader(request.secret, signedAt, request.rawBody),
        'content-length': Buffer.byteLength(request.rawBody),
        'accept-encoding': 'identity',
      },
      body: request.rawBody,
      timeoutMs,
      bodyLimitBytes: RESPONSE_READ_LIMIT_BYTES,
      // A connection to the target (and the addresses its name passed the guard with) is reused.
      keepAlive: true,
    },
    guard,
  );
  if (outcome.failure) return result({ ok: false, status_code: null, error: outcome.failure.message });
  const { status, statusMessage, headers, text } = outcome.response;
  const excerpt = text.slice(0, RESPONSE_EXCERPT_CHARS);
  if (status >= 200 && status < 300) return result({ ok: true, status_code: status, error: null, response_excerpt: excerpt });
  const answered = `the target answered ${status} ${statusMessage}`.trimEnd();
  const error = isRedirect(status) ? `${answered}, a redirect to ${headers.location ?? '(no Location)'}; redirects are not followed` : answered;
  return result({ ok: false, status_code: status, error, response_excerpt: excerpt });
}
