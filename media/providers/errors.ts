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
