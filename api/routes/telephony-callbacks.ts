import { setTimeout as sleep } from 'node:timers/promises';
import { Router, type Request } from 'express';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { Call, FINAL_CALL_STATUSES } from '../../activities/db/models/call';
import { HANGUP_ANSWER_XML, streamAnswerXml } from '../../media/providers/telephony/answer-xml';
import { PLIVO_NONCE_HEADER, PLIVO_SIGNATURE_HEADER, parseStatusCallback, verifyPlivoCallback, type CallbackParams } from '../../media/providers/telephony/callbacks';
import { signStreamToken } from '../../media/telephony/stream-token';
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
  /** Signs the token in an answered call's audio stream URL, which the media node checks. */
  streamTokenSecret: string;
}

/** How long an answer waits for the call's media node, and how often it looks. */
const MEDIA_NODE_WAIT_MS = 5_000;
const MEDIA_NODE_POLL_MS = 50;

/**
 * The telephony provider's callbacks of a call. `POST /telephony/calls/{call_id}/status` is
 * the ring and hang-up URL `dialCall` gives it, `.../answer` the answer URL. No credentials:
 * the provider signs each callback with the account's auth token over the URL it was given
 * and the form fields, so a valid signature proves both the sender and the call id in the
 * path. The status goes to the call's workflow as the `providerStatus` signal.
 */
export function telephonyCallbackRoutes(deps: TelephonyCallbackDeps): Router {
  const router = Router();

  router.post('/telephony/calls/:call_id/status', async (req, res) => {
    await relayStatus(req, deps);
    res.json({});
  });

  /**
   * The answer request is the in-progress callback, and its answer (Plivo XML) what the
   * call does: stream its audio both ways to the media node holding the call's conversation,
   * which registers itself on the call record (`media_node_url`). The answer waits a little
   * for it, as the conversation starts when the workflow learns of the answer, i.e. now. No
   * media node in time, or no call to hold: the call is hung up, since nobody would talk.
   */
  router.post('/telephony/calls/:call_id/answer', async (req, res) => {
    const callId = req.params.call_id as string;
    const mediaNode = (await relayStatus(req, deps)) ? await waitForMediaNode(callId) : 'call-over';
    res.type('application/xml');
    if (typeof mediaNode !== 'object') {
      if (mediaNode === 'none-in-time') deps.logger.error({ msg: 'no media node took the answered call in time; the provider is told to hang up', call_id: callId, waited_ms: MEDIA_NODE_WAIT_MS });
      res.send(HANGUP_ANSWER_XML);
      return;
    }
    const token = await signStreamToken(deps.streamTokenSecret, callId);
    const base = mediaNode.url.replace(/\/$/, '');
    res.send(streamAnswerXml(`${base}/telephony/streams/${encodeURIComponent(callId)}?token=${encodeURIComponent(token)}`));
  });

  return router;
}

/**
 * Checks a callback and signals its status to the call's workflow; false when that workflow
 * is not running (the call has ended, or never existed).
 */
async function relayStatus(req: Request, deps: TelephonyCallbackDeps): Promise<boolean> {
  const callId = req.params.call_id as string;
  const params = req.body as CallbackParams;
  if (!signedByProvider(req, params, deps)) throw new HttpError(403, 'the callback is not signed by the telephony provider');
  const callback = parseStatusCallback(params);
  if (!callback) throw new HttpError(400, 'not a status callback of a call: CallStatus (a call status) and RequestUUID or CallUUID are required');
  try {
    await deps.temporal.workflow.getHandle(callWorkflowId(callId)).signal(providerStatusSignal, { ...callback, at: deps.now().toISOString() });
    return true;
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    // A late or repeated status, or no such call. Answered 2xx all the same: any other answer
    // makes the provider retry a status nobody will ever take.
    deps.logger.info({ msg: 'telephony callback for a call without a running workflow', call_id: callId, status: callback.status, provider_call_id: callback.providerCallId });
    return false;
  }
}

/**
 * The call's media node once one has written its URL; `none-in-time` after MEDIA_NODE_WAIT_MS,
 * and `call-over` at once for a call that has ended or does not exist.
 */
async function waitForMediaNode(callId: string): Promise<{ url: string } | 'none-in-time' | 'call-over'> {
  const deadline = Date.now() + MEDIA_NODE_WAIT_MS;
  for (;;) {
    const call = await Call.findById(callId, { media_node_url: 1, status: 1 }).lean();
    if (!call || FINAL_CALL_STATUSES.includes(call.status)) return 'call-over';
    if (call.media_node_url) return { url: call.media_node_url };
    if (Date.now() >= deadline) return 'none-in-time';
    await sleep(MEDIA_NODE_POLL_MS);
  }
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
