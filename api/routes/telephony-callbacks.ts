import { Router, type Request } from 'express';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { PLIVO_NONCE_HEADER, PLIVO_SIGNATURE_HEADER, parseStatusCallback, verifyPlivoCallback, type CallbackParams } from '../../media/providers/telephony/callbacks';
import { callWorkflowId, providerStatusSignal } from '../../workflows/shared/calls';
import { HttpError } from '../http-error';
import type { Logger } from '../logger';

export interface TelephonyCallbackDeps {
  temporal: Client;
  now: () => Date;
  logger: Logger;
  /** The provider account's auth token, which signs its callbacks; absent: telephony is not configured. */
  authToken: string | undefined;
  /** The API's public base (`.../api/v1`), the start of every URL given to the provider. */
  publicApiUrl: string | undefined;
}

/**
 * The telephony provider's status callbacks (`POST /telephony/calls/{call_id}/status`, the
 * ring, answer and hang-up URLs `dialCall` gives it). No credentials: the provider signs each
 * callback with the account's auth token over the URL it was given and the form fields, so a
 * valid signature proves both the sender and the call id in the path; no database lookup is
 * needed. The status goes to the call's workflow as the `providerStatus` signal.
 */
export function telephonyCallbackRoutes(deps: TelephonyCallbackDeps): Router {
  const router = Router();

  router.post('/telephony/calls/:call_id/status', async (req, res) => {
    const callId = req.params.call_id as string;
    const params = req.body as CallbackParams;
    if (!signedByProvider(req, params, deps)) throw new HttpError(403, 'the callback is not signed by the telephony provider');
    const callback = parseStatusCallback(params);
    if (!callback) throw new HttpError(400, 'not a status callback of a call: CallStatus (a call status) and RequestUUID or CallUUID are required');
    try {
      await deps.temporal.workflow.getHandle(callWorkflowId(callId)).signal(providerStatusSignal, { ...callback, at: deps.now().toISOString() });
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      // The call has ended (a late or repeated status) or never existed. 200 all the same: an
      // answer other than 2xx makes the provider retry a status nobody will ever take.
      deps.logger.info({ msg: 'telephony callback for a call without a running workflow', call_id: callId, status: callback.status, provider_call_id: callback.providerCallId });
    }
    res.json({});
  });

  return router;
}

/**
 * Checks the signature against the public URL the provider was given (the public base, then
 * this path and query as received under it), not the address the request reached: behind a
 * proxy or under the `/api` alias the two differ.
 */
function signedByProvider(req: Request, params: CallbackParams, deps: TelephonyCallbackDeps): boolean {
  if (!deps.authToken || !deps.publicApiUrl) return false;
  const queryAt = req.originalUrl.indexOf('?');
  const url = deps.publicApiUrl + req.path + (queryAt === -1 ? '' : req.originalUrl.slice(queryAt));
  return verifyPlivoCallback({ authToken: deps.authToken, url, params, nonce: req.get(PLIVO_NONCE_HEADER), signature: req.get(PLIVO_SIGNATURE_HEADER) });
}
