import { ProviderUnavailableError } from './errors';

export interface JsonRequest {
  /** Names the service in errors (`telephony`, `speech synthesis`). */
  service: string;
  url: string;
  headers?: Record<string, string>;
  timeoutMs: number;
}

export interface JsonAnswer {
  status: number;
  body: unknown;
}

/**
 * GET a JSON document from an outside service. Any status is returned (some APIs answer 404
 * for "you do not hold this"); a failure to get a JSON answer at all - refused connection,
 * timeout, a body that is not JSON - is a ProviderUnavailableError.
 */
export async function getJson(request: JsonRequest): Promise<JsonAnswer> {
  let status: number;
  let text: string;
  try {
    // The timeout covers the whole exchange, body included.
    const res = await fetch(request.url, {
      headers: { Accept: 'application/json', ...request.headers },
      signal: AbortSignal.timeout(request.timeoutMs),
      redirect: 'error',
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    throw new ProviderUnavailableError(request.service, describeFetchFailure(err, request.timeoutMs));
  }
  try {
    return { status, body: JSON.parse(text) as unknown };
  } catch {
    throw new ProviderUnavailableError(request.service, `answered ${status} without a JSON body`);
  }
}

/** The answer's body when it is a 2xx, else a ProviderUnavailableError naming the status. */
export function okBody(service: string, answer: JsonAnswer): unknown {
  if (answer.status < 200 || answer.status > 299) throw new ProviderUnavailableError(service, `answered ${answer.status}`);
  return answer.body;
}

function describeFetchFailure(err: unknown, timeoutMs: number): string {
  const error = err as Error & { cause?: { code?: string } };
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  return error.cause?.code ? `connection failed: ${error.cause.code}` : 'connection failed';
}
