import { setTimeout as sleep } from 'node:timers/promises';
import { Router, type Request } from 'express';
import type { Client } from '@temporalio/client';
import { Call, FINAL_CALL_STATUSES } from '../../db/models/call';
import { conferenceXml, dialXml, HANGUP_ANSWER_XML, REJECT_ANSWER_XML, streamAnswerXml } from '../../providers/telephony/answer-xml';
import { parseMachineDetection, parseStatusCallback, type CallbackParams, type StatusCallback } from '../../providers/telephony/callbacks';
import { providerSignatureOf } from '../middleware/telephony-callback-replay';
import { signStreamToken } from '../../domain/calls/stream-token';
import { transferLegStreamKey, type ProviderStatusUpdate } from '../../contracts/calls';
import { answerCall, signalProviderStatus, signalTransferProgress } from '../../domain/calls/temporal';
import { callOfProviderCall, takeInboundCall, type InboundCallRequest } from '../../domain/calls/inbound-calls';
import { relayRecordedAnswer } from '../../domain/calls/recorded-answer';
import { chooseMediaNode, claimMediaNode } from '../../domain/calls/media-nodes';
import { HttpError } from '../../domain/shared/http-error';
import type { Logger } from '../../domain/shared/logger';
import { apiRouter } from './router';

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

/** How long an answer waits for a media node to announce itself (a repeated inbound answer request; histories from before 0165). */
const MEDIA_NODE_WAIT_MS = 5_000;
/** How long an inbound call's status waits for the call's workflow, which its answer request may still be starting. */
const ADMISSION_WAIT_MS = 5_000;
const ADMISSION_POLL_MS = 100;

/**
 * The telephony provider's callbacks. Of an outbound call: `POST /telephony/calls/{call_id}/status`
 * is the ring and hang-up URL `dialCall` gives it, `.../answer` the answer URL. Of inbound
 * calls, the URLs of the provider application the account's numbers use:
 * `POST /telephony/inbound/answer` when someone dials a number, `POST /telephony/inbound/status`
 * its hang-up URL. No credentials: the provider signs each callback with the account's auth
 * token over the URL it was given and the form fields, so a valid signature proves both the
 * sender and the call id in the path. Statuses go to the call's workflow as the
 * `providerStatus` signal, all but an outbound call's ring.
 */
export function telephonyCallbackRoutes(deps: TelephonyCallbackDeps): Router {
  const router = apiRouter();

  router.post('/telephony/calls/:call_id/status', async (req, res) => {
    const callId = req.params.call_id as string;
    const callback = statusOf(signedParams(req, deps));
    // The ring changes nothing: the call's workflow wrote `ringing` when the dial was accepted.
    // Relayed, it cost a signal and a workflow task per call, in a burst ahead of the answers (0229).
    if (callback.status === 'ringing') return void res.json({});
    // The answer's own signal may not have landed yet (it follows the answer: 0235): an answered
    // call's end (`completed`) must not reach the workflow before its start, or it would end unconnected.
    if (callback.status === 'completed') await relayRecordedAnswer(deps.temporal, callId, callback.providerCallId);
    await relayStatus(callId, callback, deps);
    res.json({});
  });

  /**
   * The verdict of the provider's answering-machine detection, asked for at dial time when the
   * agent detects voicemail (docs/decisions/0158): written once on the call's `answered_by`, where
   * the call's media node looks for it. A retried or late callback changes nothing (the first
   * verdict stays), and is answered 2xx all the same so that the provider stops retrying.
   */
  router.post('/telephony/calls/:call_id/machine', async (req, res) => {
    const callId = req.params.call_id as string;
    const verdict = parseMachineDetection(signedParams(req, deps));
    if (!verdict) throw new HttpError(400, 'not a machine-detection callback: Machine (true or false) and RequestUUID or CallUUID are required');
    const { modifiedCount } = await Call.updateOne({ _id: callId, answered_by: null }, { $set: { answered_by: verdict.answeredBy, updated_at: deps.now() } });
    deps.logger.info({
      msg: 'answering-machine detection',
      call_id: callId,
      answered_by: verdict.answeredBy,
      provider_call_id: verdict.providerCallId,
      recorded: modifiedCount === 1,
    });
    res.json({});
  });

  /**
   * The answer request is the in-progress callback, and its answer (Plivo XML) what the
   * call does: stream its audio both ways to a live media node, where the call's conversation
   * runs (outboundAnswerXml).
   */
  router.post('/telephony/calls/:call_id/answer', async (req, res) => {
    const callId = req.params.call_id as string;
    const callback = statusOf(signedParams(req, deps));
    // The call's agent as its dial named it in this URL, which the provider signed (0244).
    const agentId = typeof req.query.agent_id === 'string' ? req.query.agent_id : undefined;
    res.type('application/xml').send(await outboundAnswerXml(callId, deps, { ...callback, at: deps.now().toISOString() }, agentId));
  });

  /**
   * Someone dialled one of the account's numbers: the call is taken by the agent connected
   * to it (takeInboundCall), and answered like an outbound call's answer; a call not taken is
   * rejected unanswered. Its workflow starts at `call.started`: this request is the answer.
   */
  router.post('/telephony/inbound/answer', async (req, res) => {
    const call = inboundCallOf(signedParams(req, deps));
    res.type('application/xml');
    // The node is chosen before the call is admitted, so that the workflow starts knowing it (0165).
    const node = await chooseMediaNode(deps.now());
    if (!node) {
      deps.logger.error({ msg: 'no media node is alive to take an inbound call; rejected', provider_call_id: call.providerCallId });
      res.send(REJECT_ANSWER_XML);
      return;
    }
    const decision = await takeInboundCall(deps, call, node);
    if (!decision.answer) {
      deps.logger.info({ msg: 'inbound call rejected', reason: decision.reason, call_id: decision.callId, provider_call_id: call.providerCallId });
      res.send(REJECT_ANSWER_XML);
      return;
    }
    // A repeated answer request: the call is the first request's, its node the workflow's.
    res.send(decision.admittedHere ? streamXml(decision.callId, node.url, deps) : await announcedNodeAnswerXml(decision.callId, deps));
  });

  /**
   * Cold transfer (docs/decisions/0160): the call was transferred here (`aleg_url`); it dials the
   * destination named in the query (the provider signed this URL as the workflow gave it), with
   * the call's own number as caller ID. The dial's events come to `.../transfer/events`, its end
   * to `.../transfer/action`.
   */
  router.post('/telephony/calls/:call_id/transfer/dial', async (req, res) => {
    signedParams(req, deps);
    const callId = req.params.call_id as string;
    const to = String(req.query.to ?? '');
    const timeout = Number(req.query.timeout ?? 30);
    const limit = Number(req.query.limit ?? 14_400);
    if (!/^\+[1-9]\d{7,14}$/.test(to) || !Number.isInteger(timeout) || !Number.isInteger(limit))
      throw new HttpError(400, 'to (E.164), timeout and limit (seconds) are required');
    const call = await Call.findById(callId, { direction: 1, from_number: 1, to_number: 1 }).lean();
    res.type('application/xml');
    if (!call) return void res.send(HANGUP_ANSWER_XML);
    const base = `${deps.publicApiUrl}/telephony/calls/${encodeURIComponent(callId)}/transfer`;
    const callerId = call.direction === 'inbound' ? call.to_number : call.from_number;
    res.send(dialXml({ number: to, callerId, timeoutSeconds: timeout, timeLimitSeconds: limit, actionUrl: `${base}/action`, callbackUrl: `${base}/events` }));
  });

  /** The transfer's dial events (`callbackUrl`): the destination answered, or its leg hung up (with its seconds). */
  router.post('/telephony/calls/:call_id/transfer/events', async (req, res) => {
    const params = signedParams(req, deps);
    const callId = req.params.call_id as string;
    const at = deps.now().toISOString();
    const action = params.DialAction;
    if (action === 'answer' || action === 'connected')
      await signalTransferProgress(deps.temporal, callId, { event: 'answered', status: params.DialBLegStatus ?? action, at });
    else if (action === 'hangup') {
      const seconds = params.DialBLegDuration;
      await signalTransferProgress(deps.temporal, callId, {
        event: 'ended',
        status: params.DialBLegStatus ?? 'completed',
        ...(seconds !== undefined && /^\d+$/.test(seconds) ? { bridgedSeconds: Number(seconds) } : {}),
        at,
      });
    }
    res.json({});
  });

  /**
   * The transfer's dial is over (`action`, with `DialStatus`): reported to the workflow, and the
   * call hangs up (a cold transfer does not come back to the agent: docs/decisions/0160).
   */
  router.post('/telephony/calls/:call_id/transfer/action', async (req, res) => {
    const params = signedParams(req, deps);
    const callId = req.params.call_id as string;
    await signalTransferProgress(deps.temporal, callId, { event: 'ended', status: params.DialStatus ?? 'failed', at: deps.now().toISOString() });
    res.type('application/xml').send(HANGUP_ANSWER_XML);
  });

  /**
   * Warm transfer (docs/decisions/0161): the second leg's answer URL. The person answered: the
   * call's workflow hears of it, and the leg's audio streams to the call's media node (named in
   * the signed query) as `<call_id>:transfer`, where the conversation briefs them.
   */
  router.post('/telephony/calls/:call_id/transfer/leg/answer', async (req, res) => {
    signedParams(req, deps);
    const callId = req.params.call_id as string;
    const node = String(req.query.node ?? '');
    res.type('application/xml');
    if (
      !/^wss?:\/\//.test(node) ||
      !(await signalTransferProgress(deps.temporal, callId, { event: 'answered', status: 'in-progress', at: deps.now().toISOString() }))
    )
      return void res.send(HANGUP_ANSWER_XML);
    const key = transferLegStreamKey(callId);
    const token = signStreamToken(deps.streamTokenSecret, key);
    res.send(streamAnswerXml(`${node.replace(/\/$/, '')}/telephony/streams/${encodeURIComponent(key)}?token=${encodeURIComponent(token)}`));
  });

  /** Warm: the provider's answering-machine verdict on the second leg (a machine fails the transfer with `machine`). */
  router.post('/telephony/calls/:call_id/transfer/leg/machine', async (req, res) => {
    const verdict = parseMachineDetection(signedParams(req, deps));
    if (!verdict) throw new HttpError(400, 'not a machine-detection callback: Machine (true or false) and RequestUUID or CallUUID are required');
    await signalTransferProgress(deps.temporal, req.params.call_id as string, {
      event: verdict.answeredBy,
      status: verdict.answeredBy,
      at: deps.now().toISOString(),
    });
    res.json({});
  });

  /** Warm: the second leg's ring and hang-up URL; its end (with its status) goes to the call's workflow. */
  router.post('/telephony/calls/:call_id/transfer/leg/status', async (req, res) => {
    const callback = statusOf(signedParams(req, deps));
    if (callback.status !== 'ringing' && callback.status !== 'in-progress') {
      await signalTransferProgress(deps.temporal, req.params.call_id as string, { event: 'ended', status: callback.status, at: deps.now().toISOString() });
    }
    res.json({});
  });

  /** Warm: both legs are re-pointed here once the person was briefed: one conference room named after the call. */
  router.post('/telephony/calls/:call_id/transfer/conference', (req, res) => {
    signedParams(req, deps);
    res.type('application/xml').send(conferenceXml(`call-${req.params.call_id as string}`));
  });

  /** An inbound call's later statuses (its end), found by the provider's call id. */
  router.post('/telephony/inbound/status', async (req, res) => {
    const callback = statusOf(signedParams(req, deps));
    const callId = await callOfProviderCall(callback.providerCallId);
    if (callId) await relayInboundStatus(callId, callback, deps);
    else deps.logger.info({ msg: 'inbound status of a call that was never taken', status: callback.status, provider_call_id: callback.providerCallId });
    res.json({});
  });

  return router;
}

/** The callback's form fields, once its signature is checked (403 otherwise). */
function signedParams(req: Request, deps: TelephonyCallbackDeps): CallbackParams {
  const params = req.body as CallbackParams;
  if (!signedByProvider(req, params, deps)) throw new HttpError(403, 'the callback is not signed by the telephony provider');
  return params;
}

function statusOf(params: CallbackParams): StatusCallback {
  const callback = parseStatusCallback(params);
  if (!callback) throw new HttpError(400, 'not a status callback of a call: CallStatus (a call status) and RequestUUID or CallUUID are required');
  return callback;
}

/** The inbound call an answer request is about; Plivo writes numbers as digits without `+`. */
function inboundCallOf(params: CallbackParams): InboundCallRequest {
  const { From: from, To: to, CallUUID: providerCallId, Direction: direction } = params;
  if (!from || !to || !providerCallId || (direction !== undefined && direction !== 'inbound')) {
    throw new HttpError(400, 'not an inbound call: From, To and CallUUID are required, and Direction must be inbound');
  }
  const e164 = (number: string) => (/^\d+$/.test(number) ? `+${number}` : number);
  return { from: e164(from), to: e164(to), providerCallId };
}

/**
 * Signals the status to the call's workflow; false when that workflow is not running (the call
 * has ended, or never existed).
 */
async function signalStatus(callId: string, callback: StatusCallback, deps: TelephonyCallbackDeps): Promise<boolean> {
  return signalProviderStatus(deps.temporal, callId, { ...callback, at: deps.now().toISOString() });
}

/**
 * Hands a checked status to the call's workflow; false when it is not running. Answered 2xx
 * all the same: any other answer makes the provider retry a status nobody will ever take.
 */
async function relayStatus(callId: string, callback: StatusCallback, deps: TelephonyCallbackDeps): Promise<boolean> {
  if (await signalStatus(callId, callback, deps)) return true;
  // A late or repeated status, or no such call.
  deps.logger.info({
    msg: 'telephony callback for a call without a running workflow',
    call_id: callId,
    status: callback.status,
    provider_call_id: callback.providerCallId,
  });
  return false;
}

/**
 * As relayStatus, but a caller may hang up while the answer request is still admitting the
 * call (the link to the call is written first, the record and the workflow after): while the
 * record is missing or live, the status waits a little for the workflow. A refused call's
 * record is final at once, and no workflow ever runs for it.
 */
async function relayInboundStatus(callId: string, callback: StatusCallback, deps: TelephonyCallbackDeps): Promise<void> {
  const deadline = Date.now() + ADMISSION_WAIT_MS;
  for (;;) {
    if (await signalStatus(callId, callback, deps)) return;
    const call = await Call.findById(callId, { status: 1 }).lean();
    if ((call && FINAL_CALL_STATUSES.includes(call.status)) || Date.now() >= deadline) break;
    await sleep(ADMISSION_POLL_MS);
  }
  await relayStatus(callId, callback, deps);
}

/**
 * The answer to an answered outbound call: stream its audio both ways to a media node chosen
 * here from the directory of live nodes (docs/decisions/0165), at once. The claim on the call
 * record (its node and the answer's time) is the answer's durable trace; the call's workflow is
 * told after the provider has its answer (0235): the `in-progress` status names the node, where
 * the conversation then runs. Should that signal be late or lost, the hang-up's status and the
 * media node tell the workflow from the record (relayRecordedAnswer). No live node, or a call
 * that is over: hang up, since nobody would talk.
 */
async function outboundAnswerXml(callId: string, deps: TelephonyCallbackDeps, status: ProviderStatusUpdate, agentId?: string): Promise<string> {
  const chosen = await chooseMediaNode(deps.now());
  if (!chosen) {
    deps.logger.error({ msg: 'no media node is alive to take the answered call; the provider is told to hang up', call_id: callId });
    return HANGUP_ANSWER_XML;
  }
  const node = await claimMediaNode(callId, chosen, new Date(status.at));
  if (node === 'call-over') {
    deps.logger.info({ msg: 'answer for a call that is over', call_id: callId, status: status.status, provider_call_id: status.providerCallId });
    return HANGUP_ANSWER_XML;
  }
  const xml = streamXml(callId, node.url, deps, agentId);
  // After this request's answer is written (the signal's encoding and encryption take the CPU too).
  setImmediate(() => void tellWorkflowOfAnswer(callId, { ...status, mediaNode: node }, deps));
  return xml;
}

/** The answer's `in-progress` for the call's workflow, sent beside the answer; a failure is logged (the record is relayed later: 0235). */
async function tellWorkflowOfAnswer(callId: string, status: ProviderStatusUpdate, deps: TelephonyCallbackDeps): Promise<void> {
  try {
    if (await signalProviderStatus(deps.temporal, callId, status)) return;
    deps.logger.info({ msg: 'answer for a call without a running workflow', call_id: callId, provider_call_id: status.providerCallId });
  } catch (error) {
    deps.logger.error({
      msg: 'the answer could not be signalled to the call; its media node relays it from the record',
      call_id: callId,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * The answer to a call whose node the workflow already knows (an inbound call's repeated answer
 * request), or that a node announces (histories from before 0165): the call's workflow answers
 * with its media node (`answer` update). No media node in time, or no call to hold: hang up.
 */
async function announcedNodeAnswerXml(callId: string, deps: TelephonyCallbackDeps): Promise<string> {
  const mediaNodeUrl = await answerCall(deps.temporal, callId, { waitMs: MEDIA_NODE_WAIT_MS });
  if (mediaNodeUrl === 'call-over') {
    deps.logger.info({ msg: 'answer for a call without a running workflow', call_id: callId });
    return HANGUP_ANSWER_XML;
  }
  if (mediaNodeUrl === null) {
    deps.logger.error({ msg: 'no media node took the answered call in time; the provider is told to hang up', call_id: callId, waited_ms: MEDIA_NODE_WAIT_MS });
    return HANGUP_ANSWER_XML;
  }
  return streamXml(callId, mediaNodeUrl, deps);
}

/**
 * `<Stream>` of the call's audio, both ways, to the media node at `nodeUrl`, with a stream token of
 * this very call; `agentId` goes into the token for the media node to read the call and its agent at once (0244).
 */
function streamXml(callId: string, nodeUrl: string, deps: TelephonyCallbackDeps, agentId?: string): string {
  const token = signStreamToken(deps.streamTokenSecret, callId, undefined, 'telephony', agentId);
  const base = nodeUrl.replace(/\/$/, '');
  return streamAnswerXml(`${base}/telephony/streams/${encodeURIComponent(callId)}?token=${encodeURIComponent(token)}`);
}

/**
 * Checks the signature (Plivo's V3, as its SDKs compute it: docs/decisions/0175) against the
 * public URL the provider was given (the public base, then this path and query as received
 * under it), not the address the request reached: behind a proxy or under the `/api` alias the
 * two differ. A replay of a signed callback was refused before this route (0177).
 */
function signedByProvider(req: Request, params: CallbackParams, deps: TelephonyCallbackDeps): boolean {
  return providerSignatureOf(req, params, deps) !== null;
}
