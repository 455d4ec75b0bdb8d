/** What a provider failure is, for the process's metrics (bounded: the service's name and the failure's kind). */
export type ProviderErrorKind = 'unavailable' | 'refused' | 'dial_refused' | 'not_configured';

type ProviderErrorListener = (service: string, kind: ProviderErrorKind) => void;
let providerErrorListener: ProviderErrorListener | null = null;

/**
 * One listener (the process's metrics, domain/shared/metrics.ts) hears every provider failure
 * as it is made, wherever the adapter raises it: streams' failures too, which no caller awaits.
 */
export function onProviderError(listener: ProviderErrorListener | null): void {
  providerErrorListener = listener;
}

function reportProviderError(service: string, kind: ProviderErrorKind): void {
  providerErrorListener?.(service, kind);
}

/**
 * An outside service did not answer usefully: connection refused, no answer within the
 * timeout, a 5xx (or 408, 429; other 4xx are ProviderRefusedError where the adapter tells
 * them apart) or a body that is not what its API documents. The API answers 502 with
 * `detail` (the contract: "a provider did not answer; retry").
 */
export class ProviderUnavailableError extends Error {
  constructor(
    /** What the caller knows the service as: `telephony`, `speech synthesis`. */
    readonly service: string,
    readonly reason: string,
  ) {
    super(`the ${service} provider did not answer (${reason}); retry in a moment`);
    this.name = 'ProviderUnavailableError';
    reportProviderError(service, 'unavailable');
  }
}

/**
 * The telephony provider refused to place a call: it answered a 4xx about the call itself
 * (a number it cannot dial, a caller id the account may not use, no credit). Retrying the
 * same request gets the same answer; `reason` is the provider's own message.
 */
export class DialRefusedError extends Error {
  constructor(
    readonly service: string,
    readonly reason: string,
  ) {
    super(`the ${service} provider refused the call: ${reason}`);
    this.name = 'DialRefusedError';
    reportProviderError(service, 'dial_refused');
  }
}

/**
 * An outside service refused a request: it answered a 4xx other than 408 (timeout) and 429
 * (rate limit), about its credentials or about what was asked. The same request gets the
 * same answer until someone changes a setting, so unlike ProviderUnavailableError this says
 * which one and whose it is (`server setting TTS_API_KEY`, `agent setting voice.voice_id`)
 * and does not ask to retry. The API answers 502 with it too: the caller's request was fine,
 * the service's own configuration is not.
 */
export class ProviderRefusedError extends Error {
  constructor(
    readonly service: string,
    /** What was refused: `the credentials`, `the agent's voice 'x'`. */
    readonly refused: string,
    /** The setting to change: `server setting TTS_API_KEY`, `agent setting voice.voice_id`. */
    readonly setting: string,
    /** The provider's answer: `answered 400: voice 'x' is not one of: ...`. */
    readonly reason: string,
  ) {
    super(`the ${service} provider refused ${refused} (${setting}): ${reason}`);
    this.name = 'ProviderRefusedError';
    reportProviderError(service, 'refused');
  }
}

/** A 4xx that is a refusal: not 408 (the server timed out) nor 429 (rate limited), which pass with time. */
export function isRefusal(status: number): boolean {
  return status >= 400 && status <= 499 && status !== 408 && status !== 429;
}

/**
 * The refusal of a request the service answered `status` (see isRefusal): 401 and 403 refuse
 * the credentials (`credentialsSetting`, a server setting); anything else refuses `request`.
 */
export function refusalOf(
  service: string,
  status: number,
  reason: string,
  credentialsSetting: string,
  request: { refused: string; setting: string },
): ProviderRefusedError {
  if (status === 401 || status === 403) return new ProviderRefusedError(service, 'the credentials', `server setting ${credentialsSetting}`, reason);
  return new ProviderRefusedError(service, request.refused, request.setting, reason);
}

/**
 * The service has no provider configured for this: the operator's server setting is missing.
 * Like a refusal, retrying does not help; the API answers 502 with it.
 */
export class ProviderNotConfiguredError extends Error {
  constructor(
    readonly service: string,
    /** The server setting that configures the provider (`TTS_BASE_URL`). */
    readonly setting: string,
  ) {
    super(`the ${service} provider is not configured: set ${setting} (a server setting)`);
    this.name = 'ProviderNotConfiguredError';
    reportProviderError(service, 'not_configured');
  }
}
