/**
 * An outside service did not answer usefully: connection refused, no answer within the
 * timeout, a non-2xx status or a body that is not what its API documents. The API answers
 * 502 with `detail` (the contract: "a provider did not answer; retry").
 */
export class ProviderUnavailableError extends Error {
  constructor(
    /** What the caller knows the service as: `telephony`, `speech synthesis`. */
    readonly service: string,
    readonly reason: string,
  ) {
    super(`the ${service} provider did not answer (${reason}); retry in a moment`);
    this.name = 'ProviderUnavailableError';
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
  }
}
