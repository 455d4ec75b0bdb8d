import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { matchingPlivoSignature, PLIVO_NONCE_HEADER, PLIVO_SIGNATURE_HEADER, type CallbackParams } from '../../providers/telephony/callbacks';
import { claimCallbackNonce, releaseCallbackNonce } from '../../domain/calls/callback-nonces';
import { HttpError } from '../../domain/shared/http-error';
import type { Logger } from '../../domain/shared/logger';

export interface TelephonySignatureDeps {
  /** The provider account's auth token; absent: telephony is not configured, nothing is signed. */
  authToken: string | undefined;
  /** The API's public base (`.../api/v1`), the start of every URL given to the provider. */
  publicApiUrl: string | undefined;
}

/**
 * The URL the provider was given for this request: the public base, then the path and query as
 * received under it. Behind a proxy or under the `/api` alias the address reached differs, and
 * the provider signs the URL it was given.
 */
export function publicCallbackUrl(req: Request, publicApiUrl: string): string {
  const queryAt = req.originalUrl.indexOf('?');
  return publicApiUrl + req.path + (queryAt === -1 ? '' : req.originalUrl.slice(queryAt));
}

/** The provider's signature this callback carries and its nonce, once checked; null when it has no valid one. */
export function providerSignatureOf(req: Request, params: CallbackParams, deps: TelephonySignatureDeps): { nonce: string; signature: string } | null {
  if (!deps.authToken || !deps.publicApiUrl) return null;
  const nonce = req.get(PLIVO_NONCE_HEADER);
  const signature = matchingPlivoSignature({
    authToken: deps.authToken,
    url: publicCallbackUrl(req, deps.publicApiUrl),
    params,
    nonce,
    signature: req.get(PLIVO_SIGNATURE_HEADER),
  });
  return nonce && signature ? { nonce, signature } : null;
}

/**
 * Refuses a telephony callback already taken (docs/decisions/0177): a validly signed request to
 * `/telephony/...` claims its nonce and signature in the store, shared by every API node; a
 * second request with both is 409 and changes nothing. A request that was not taken (answered
 * other than 2xx, or left before its answer) gives its claim back, so that the provider's retry
 * of it gets through even if it carries the same nonce. A request without a valid signature
 * goes on, to be refused by its route (403) without leaving anything in the store.
 */
export function refuseReplayedTelephonyCallbacks(deps: TelephonySignatureDeps & { now: () => Date; logger: Logger }): RequestHandler {
  return async (req, res, next) => {
    if (req.method !== 'POST' || !req.path.startsWith('/telephony/')) return next();
    const signed = providerSignatureOf(req, (req.body ?? {}) as CallbackParams, deps);
    if (!signed) return next();
    if (!(await claimCallbackNonce(signed.nonce, signed.signature, deps.now()))) {
      deps.logger.info({ msg: 'telephony callback replayed: refused', path: req.path });
      throw new HttpError(409, 'this callback was already taken: a signed callback is taken once');
    }
    res.locals[CLAIM] = signed;
    res.on('close', () => {
      if (res.writableFinished && res.statusCode >= 200 && res.statusCode < 300) return;
      void giveBack(res, deps.logger);
    });
    next();
  };
}

/**
 * A callback its route refused (an error) gives its claim back before the error is answered, so
 * that the provider's retry, sent as soon as it has the answer, is judged afresh; given back
 * after the answer, a quick retry could still find it and be refused as a replay. Goes right
 * after the telephony routes.
 */
export function giveBackRefusedCallbackClaims(logger: Logger): ErrorRequestHandler {
  return (err: unknown, _req, res, next) => {
    void giveBack(res, logger).then(() => next(err));
  };
}

const CLAIM = 'telephonyCallbackClaim';

/** Forgets this request's claim, once (the error step and the closed connection may both ask). */
async function giveBack(res: Response, logger: Logger): Promise<void> {
  const claim = res.locals[CLAIM] as { nonce: string; signature: string } | undefined;
  if (!claim) return;
  delete res.locals[CLAIM];
  await releaseCallbackNonce(claim.nonce, claim.signature).catch((err: Error) =>
    logger.error({ msg: 'could not release a telephony callback nonce', error: err.message }),
  );
}
