import { ProviderUnavailableError } from '../media/providers/errors';
import { HttpError } from './http-error';

/** Awaits a call to an outside provider; its unavailability becomes the contract's 502. */
export async function fromProvider<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ProviderUnavailableError) throw new HttpError(502, err.message);
    throw err;
  }
}
