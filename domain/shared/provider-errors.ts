import { ProviderNotConfiguredError, ProviderRefusedError, ProviderUnavailableError } from '../../providers/errors';
import { HttpError } from './http-error';

/**
 * Awaits a call to an outside provider; its failure becomes the contract's 502: unavailable
 * (retry), or refused or not configured (the service's own configuration: the detail names
 * the setting).
 */
export async function fromProvider<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ProviderUnavailableError || err instanceof ProviderRefusedError || err instanceof ProviderNotConfiguredError)
      throw new HttpError(502, err.message);
    throw err;
  }
}
