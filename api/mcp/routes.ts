import express, { Router, type Request, type RequestHandler } from 'express';
import type { Client } from '@temporalio/client';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { authenticate, type AuthenticateDeps } from '../auth/credentials';
import type { Caller, Principal } from '../auth/context';
import { HttpError } from '../../domain/shared/http-error';
import type { Logger } from '../../domain/shared/logger';
import { resolveWorkspace } from '../middleware/access';
import { MCP_PATH, mcpAuthChallenge } from '../oauth/urls';
import { mcpServerFor } from './server';
import type { VoiceList } from '../../domain/agents/voice';
import { apiRouter } from '../routes/router';

export interface McpRouteDeps extends AuthenticateDeps {
  temporal: Client;
  logger: Logger;
  /** The API's public address: the base of the protected-resource metadata named in a 401. */
  publicApiUrl: string | undefined;
  /** The speech-synthesis service's voices (agents' `voice.voice_id` are checked against them). */
  synthesizer: VoiceList;
}

/**
 * The MCP endpoint (Streamable HTTP, stateless, JSON answers): `POST /mcp` carries one
 * JSON-RPC message or batch with a connected app's access token or an API key, checked by the
 * API's own authentication (rate limit per token). GET and DELETE are 405: there is no
 * session to stream to or end.
 */
export function mcpRoutes(deps: McpRouteDeps): Router {
  const router = apiRouter();
  router.all(MCP_PATH, callerStep(deps), express.json({ limit: '1mb' }), async (req, res, next) => {
    try {
      if (req.method !== 'POST') {
        res
          .set('Allow', 'POST')
          .status(405)
          .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; POST each message' }, id: null });
        return;
      }
      const server = mcpServerFor(res.locals.mcpCaller as Caller, {
        temporal: deps.temporal,
        now: deps.now,
        synthesizer: deps.synthesizer,
        timezone: res.locals.timezone as string,
        requestId: res.locals.requestId as string,
        logger: deps.logger,
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      next(error);
    }
  });
  return router;
}

/**
 * Who calls and in which workspace, before the body is read (as at /api/v1). A 401 names the
 * protected-resource metadata, where an MCP client finds the authorization server.
 */
function callerStep(deps: McpRouteDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const principal = await authenticate(req, res, deps).catch((error: unknown) => {
        throw pointToMetadata(error, req, deps.publicApiUrl);
      });
      refuseSessions(principal);
      const access = await resolveWorkspace(req, principal).catch((error: unknown) => {
        throw pointToMetadata(error, req, deps.publicApiUrl);
      });
      res.locals.principal = principal; // the access log names the caller
      res.locals.mcpCaller = { principal, access } satisfies Caller;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** A session is the console's credential; an assistant connects as an app (or with a key). */
function refuseSessions(principal: Principal): void {
  if (principal.credential.kind === 'session') {
    throw new HttpError(403, 'the MCP server takes the access token of a connected app (OAuth) or an API key, not a console session');
  }
}

function pointToMetadata(error: unknown, req: Request, publicApiUrl: string | undefined): unknown {
  if (!(error instanceof HttpError) || error.status !== 401) return error;
  const invalid = /invalid_token/.test(error.headers['WWW-Authenticate'] ?? '');
  return new HttpError(401, error.detail, error.extra, { 'WWW-Authenticate': mcpAuthChallenge(req, publicApiUrl, invalid ? 'invalid_token' : undefined) });
}
