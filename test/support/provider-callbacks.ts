import { randomBytes } from 'node:crypto';
import { PLIVO_NONCE_HEADER, PLIVO_SIGNATURE_HEADER, signPlivoCallback, type CallbackParams } from '../../providers/telephony/callbacks';
import type { ApiResponse, RunningApi } from './api';

/**
 * A callback posted to the API as the telephony provider posts it: form fields, a fresh nonce
 * and Plivo's V3 signature with `authToken` over the public URL (`signedUrl` to sign another;
 * `unsigned` to send neither header). `path` starts at the server's root (`/api/v1/...`).
 */
export function postProviderCallback(
  api: RunningApi,
  authToken: string,
  path: string,
  params: CallbackParams,
  options: { signedUrl?: string; unsigned?: boolean } = {},
): Promise<ApiResponse> {
  const nonce = randomBytes(8).toString('hex');
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (!options.unsigned) {
    headers[PLIVO_NONCE_HEADER] = nonce;
    headers[PLIVO_SIGNATURE_HEADER] = signPlivoCallback(authToken, options.signedUrl ?? `${api.baseUrl}${path}`, params, nonce);
  }
  return api.request(path, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
}
