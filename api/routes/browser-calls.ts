import { Router } from 'express';
import { assertWorkspaceOpen } from '../../domain/privacy/closing-gate';
import type { Client } from '@temporalio/client';
import { findByIdOwned } from '../../db/by-id';
import { Agent } from '../../db/models/agent';
import { BROWSER_STREAM_TOKEN_TTL_SECONDS, signStreamTokenWithExpiry } from '../../domain/calls/stream-token';
import type { operations } from '../../schemas/api-types';
import { creatorOf, workspaceAccessOf } from '../auth/context';
import { admitLiveCall, type LiveCallRefusal } from '../../domain/calls/admit-live-call';
import { answerCall } from '../../domain/calls/temporal';
import { HttpError } from '../../domain/shared/http-error';
import { apiRouter } from './router';

type NewBrowserCallBody = operations['placeBrowserCall']['requestBody']['content']['application/json'];

export interface BrowserCallDeps {
  temporal: Client;
  now: () => Date;
  /** Signs the browser stream tokens, which the media node checks (the API's auth secret). */
  streamTokenSecret: string;
  /**
   * The media service's public ws(s) base as browsers reach it (MEDIA_PUBLIC_URL): where the
   * page is sent when the call's media node has not registered itself in time.
   */
  mediaPublicUrl: string | undefined;
}

/** How long the answer waits for the media node running the call. */
const MEDIA_NODE_WAIT_MS = 5_000;

/**
 * `POST /calls/browser`: a call with an agent from a browser (microphone in, agent audio out).
 * It is admitted at once or refused, like an inbound call (admitLiveCall: an active agent,
 * credits, a concurrency slot free now); it counts against the limit and is charged like
 * any other. The answer names where the browser connects: the page and the WebSocket of the
 * media node that runs the call's conversation, with a token good for
 * BROWSER_STREAM_TOKEN_TTL_SECONDS to open the stream.
 */
export function browserCallRoutes(deps: BrowserCallDeps): Router {
  const router = apiRouter();

  router.post('/calls/browser', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const body = req.body as NewBrowserCallBody;
    await assertWorkspaceOpen(workspace.id, 'a new call');
    const agent = await findByIdOwned<{ _id: string; name: string; status: string; phone_number: string | null }>(
      Agent,
      body.agent_id,
      { workspace_id: workspace.id },
      { name: 1, status: 1, phone_number: 1 },
    );
    if (!agent)
      throw new HttpError(422, [{ type: 'value_error', loc: ['body', 'agent_id'], msg: 'no agent with this id in the workspace', input: body.agent_id }]);

    const admission = await admitLiveCall(deps.temporal, deps.now, {
      workspaceId: workspace.id,
      agent,
      channel: 'browser',
      toNumber: agent.phone_number ?? '',
      fromNumber: '',
      userData: body.user_data ?? {},
      placedBy: creatorOf(res).name,
      recordRefusal: false,
    });
    if (!admission.admitted) throw refusal(admission.reason, agent.name);

    const base = (await mediaNodeOf(deps.temporal, admission.callId)) ?? deps.mediaPublicUrl;
    if (!base) throw new HttpError(503, 'no media service is configured to take browser calls (MEDIA_PUBLIC_URL)');
    const { token, expiresAt } = signStreamTokenWithExpiry(deps.streamTokenSecret, admission.callId, BROWSER_STREAM_TOKEN_TTL_SECONDS, 'browser');
    const ws = base.replace(/\/+$/, '');
    const http = ws.replace(/^ws/, 'http');
    const call = encodeURIComponent(admission.callId);
    const query = encodeURIComponent(token);
    res.status(201).json({
      call_id: admission.callId,
      websocket_url: `${ws}/browser/calls/${call}?token=${query}`,
      page_url: `${http}/browser?call=${call}&token=${query}`,
      token,
      expires_at: expiresAt,
    });
  });

  return router;
}

function refusal(reason: LiveCallRefusal, agentName: string): HttpError {
  switch (reason) {
    case 'agent paused':
      return new HttpError(409, `the agent "${agentName}" is paused and takes no calls; set its status to active first`);
    case 'out of credits':
      return new HttpError(402, 'out of credits: add credits in billing to start browser calls');
    case 'concurrency limit reached':
      return new HttpError(409, 'all call slots are busy; try again when a call ends');
  }
}

/**
 * The ws(s) base of the media node running the call, once its conversation has told the
 * call's workflow (answerCall); null when none did within MEDIA_NODE_WAIT_MS, or the call is
 * already over. With several media nodes only that node holds the call's conversation, so the
 * page must go there; the configured public URL is the fallback of a single-node setup.
 */
async function mediaNodeOf(temporal: Client, callId: string): Promise<string | null> {
  const mediaNodeUrl = await answerCall(temporal, callId, { waitMs: MEDIA_NODE_WAIT_MS });
  return mediaNodeUrl === 'call-over' ? null : mediaNodeUrl;
}
