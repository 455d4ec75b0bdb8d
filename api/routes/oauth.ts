import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { Membership } from '../../db/models/membership';
import type { AuthDeps } from '../auth/deps';
import type { Role } from '../../domain/accounts/permissions';
import { clientIp } from '../auth/sessions';
import { workspacesOf } from './auth';
import { checkAuthorizationRequest, isProblem, redirectWith, type AuthorizationRequest } from '../oauth/authorization-request';
import { findClient, registerClient } from '../oauth/clients';
import { consentingUser, pageSignedInUser, presentedConsentToken, presentedSessionToken, type Consenter } from '../oauth/consent-session';
import { renderConsentStep, renderErrorPage, renderSignInStep } from '../oauth/consent-page';
import { isSignInPost, signInOnPage } from '../oauth/page-sign-in';
import { OAuthError, oauthErrorHandler, requiredParam, singleParam } from '../oauth/errors';
import { exchangeCode, issueCode, refreshTokens, revokePresentedToken } from '../oauth/grants';
import { authorizationServerMetadata, OAUTH_PATHS, protectedResourceMetadata } from '../oauth/metadata';
import { AUTHORIZATION_SERVER_METADATA_PATH, MCP_PATH, PROTECTED_RESOURCE_METADATA_PATH, publicBaseOf, resourcesOf } from '../oauth/urls';
import { apiRouter } from './router';
import { limitByAddress } from '../auth/address-limits';

export interface OAuthRouteDeps extends AuthDeps {
  /** The configured public API URL; its origin is the issuer (see `publicBaseOf`). */
  publicApiUrl: string | undefined;
}

/**
 * The OAuth 2.1 authorization server for connected apps (MCP clients), as the MCP
 * authorization specification (2025-06-18) describes it, mounted at the origin root (outside
 * `/api/v1`, where RFC 8414 and RFC 9728 put the metadata): metadata, dynamic client
 * registration, the consent page, the token endpoint and revocation.
 */
export function oauthRoutes(deps: OAuthRouteDeps): Router {
  const router = apiRouter();
  const base = (req: Request) => publicBaseOf(req, deps.publicApiUrl);
  // OAuth bodies are form-encoded (RFC 6749 section 4.1.3); JSON is parsed app-wide already.
  // Flat fields only: a repeated parameter becomes a list, which `singleParam` refuses.
  const form = express.urlencoded({ extended: false, limit: '16kb' });

  // Browser-based MCP clients read the metadata and call these endpoints from their own
  // origin. No cookie is ever read here, so any origin may.
  const cors: RequestHandler = (req, res, next) => {
    res.set({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': 'Content-Type, Authorization, MCP-Protocol-Version' });
    if (req.method === 'OPTIONS') {
      res.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS').status(204).end();
      return;
    }
    next();
  };
  const crossOrigin = [
    PROTECTED_RESOURCE_METADATA_PATH,
    `${PROTECTED_RESOURCE_METADATA_PATH}${MCP_PATH}`,
    AUTHORIZATION_SERVER_METADATA_PATH,
    OAUTH_PATHS.register,
    OAUTH_PATHS.token,
    OAUTH_PATHS.revoke,
  ];
  router.use(crossOrigin, cors);

  router.get(PROTECTED_RESOURCE_METADATA_PATH, (req, res) => {
    res.json(protectedResourceMetadata(base(req), resourcesOf(base(req)).service));
  });
  router.get(`${PROTECTED_RESOURCE_METADATA_PATH}${MCP_PATH}`, (req, res) => {
    res.json(protectedResourceMetadata(base(req), resourcesOf(base(req)).mcp));
  });
  router.get(AUTHORIZATION_SERVER_METADATA_PATH, (req, res) => {
    res.json(authorizationServerMetadata(base(req)));
  });

  router.post(OAUTH_PATHS.register, limitByAddress(deps.addressLimiter, 'oauth_register'), async (req, res) => {
    if (!req.is('application/json')) throw new OAuthError('invalid_client_metadata', 'send the client metadata as application/json');
    res
      .status(201)
      .set('Cache-Control', 'no-store')
      .json(await registerClient(req.body, deps.now()));
  });

  router.get(OAUTH_PATHS.authorize, async (req, res) => {
    const params = req.query as Record<string, unknown>;
    const request = await checkedRequest(req, res, params);
    if (!request) return;
    await showConsent(res, request, params, presentedSessionToken(req));
  });

  router.post(OAUTH_PATHS.authorize, form, async (req, res) => {
    const params = (req.body ?? {}) as Record<string, unknown>;
    const request = await checkedRequest(req, res, params);
    if (!request) return;
    const decision = params.decision;
    if (decision !== 'approve' && decision !== 'deny') {
      if (isSignInPost(params)) {
        const consenter = await signInOnPage(req, res, request, params, deps);
        if (consenter) await renderConsent(res, request, params, consenter);
        return;
      }
      await showConsent(res, request, params, presentedSessionToken(req));
      return;
    }
    // Denying needs a signed-in member too: otherwise anyone could end someone's sign-in flow.
    const consenter = await decidingMember(req, res, request, params);
    if (!consenter) return;
    const { user } = consenter;
    const iss = base(req);
    if (decision === 'deny') {
      res.redirect(
        303,
        redirectWith(request.redirectUri, { error: 'access_denied', error_description: 'the member denied access', state: request.state, iss }),
      );
      return;
    }
    const workspaceId = typeof params.workspace_id === 'string' ? params.workspace_id : '';
    const membership = /^[0-9a-f]{32}$/.test(workspaceId)
      ? await Membership.findOne({ workspace_id: workspaceId, user_id: user.id }, { role: 1 }).lean()
      : null;
    if (!membership) {
      await renderConsent(res, request, params, consenter, 'Pick one of your workspaces.');
      return;
    }
    const now = deps.now();
    const code = await issueCode(request, user.id, workspaceId, now);
    await recordWorkspaceAudit(workspaceId, {
      action: 'app.connected',
      actor: { type: 'user', id: user.id, name: user.name },
      target: { type: 'oauth_client', id: request.client._id, name: request.client.client_name },
      at: now,
      ip: clientIp(req),
    });
    res.redirect(303, redirectWith(request.redirectUri, { code, state: request.state, iss }));
  });

  router.post(OAUTH_PATHS.token, form, async (req, res) => {
    const body = req.body as Record<string, unknown> | undefined;
    const grantType = requiredParam(body, 'grant_type');
    const clientId = requiredParam(body, 'client_id');
    const client = await findClient(clientId);
    if (!client) throw new OAuthError('invalid_client', 'unknown client_id; register the client first');
    if (!client.grant_types.includes(grantType) && (grantType === 'authorization_code' || grantType === 'refresh_token')) {
      throw new OAuthError('unauthorized_client', `the client did not register the ${grantType} grant`);
    }
    const now = deps.now();
    let tokens;
    if (grantType === 'authorization_code') {
      tokens = await exchangeCode(
        {
          clientId,
          clientName: client.client_name,
          code: requiredParam(body, 'code'),
          codeVerifier: singleParam(body, 'code_verifier'),
          redirectUri: singleParam(body, 'redirect_uri'),
          resource: singleParam(body, 'resource'),
        },
        now,
      );
    } else if (grantType === 'refresh_token') {
      tokens = await refreshTokens({ clientId, refreshToken: requiredParam(body, 'refresh_token'), resource: singleParam(body, 'resource') }, now);
    } else {
      throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
    }
    // A client that did not register the refresh_token grant gets no refresh token.
    const answer = client.grant_types.includes('refresh_token') ? tokens : { ...tokens, refresh_token: undefined };
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(answer);
  });

  router.post(OAUTH_PATHS.revoke, form, async (req, res) => {
    const body = req.body as Record<string, unknown> | undefined;
    const token = requiredParam(body, 'token');
    const clientId = requiredParam(body, 'client_id');
    if (!(await findClient(clientId))) throw new OAuthError('invalid_client', 'unknown client_id');
    await revokePresentedToken(token, clientId, deps.now());
    res.status(200).set('Cache-Control', 'no-store').end();
  });

  router.use([OAUTH_PATHS.register, OAUTH_PATHS.token, OAUTH_PATHS.revoke], oauthErrorHandler);
  return router;

  /** The request when it is sound; otherwise the error is answered (page or redirect) and null returned. */
  async function checkedRequest(req: Request, res: Response, params: Record<string, unknown>): Promise<AuthorizationRequest | null> {
    const checked = await checkAuthorizationRequest(params, base(req));
    if (!isProblem(checked)) return checked;
    if (checked.kind === 'page') renderErrorPage(res, checked.message);
    else
      res.redirect(
        303,
        redirectWith(checked.redirectUri, { error: checked.error, error_description: checked.description, state: checked.state, iss: base(req) }),
      );
    return null;
  }

  /** Step 1 (no valid session yet) or step 2 (pick a workspace, allow or deny). */
  async function showConsent(res: Response, request: AuthorizationRequest, params: Record<string, unknown>, sessionToken: string | undefined) {
    const user = await consentingUser(sessionToken, res, deps);
    if (!user) {
      renderSignInStep(res, request, params, sessionToken ? { problem: { status: 401, message: SESSION_ENDED } } : {});
      return;
    }
    await renderConsent(res, request, params, { user, credential: { field: 'session_token', value: sessionToken as string } });
  }

  /**
   * Who answers Allow or Deny: the member signed in on this page for this very request
   * (`consent_token`), or the console's member (`session_token`). Otherwise the sign-in step
   * is shown again and null returned.
   */
  async function decidingMember(req: Request, res: Response, request: AuthorizationRequest, params: Record<string, unknown>): Promise<Consenter | null> {
    const consentToken = presentedConsentToken(req);
    if (consentToken) {
      const user = await pageSignedInUser(consentToken, request, deps);
      if (user) return { user, credential: { field: 'consent_token', value: consentToken } };
      renderSignInStep(res, request, params, {
        problem: { status: 401, message: 'Your sign-in on this page has expired or is for another request; sign in again.' },
      });
      return null;
    }
    const sessionToken = presentedSessionToken(req);
    const user = await consentingUser(sessionToken, res, deps);
    if (user) return { user, credential: { field: 'session_token', value: sessionToken as string } };
    renderSignInStep(res, request, params, { problem: { status: 401, message: SESSION_ENDED } });
    return null;
  }
}

const SESSION_ENDED = 'Your session has ended or the token is not valid; sign in again.';

async function renderConsent(res: Response, request: AuthorizationRequest, params: Record<string, unknown>, consenter: Consenter, error?: string) {
  const workspaces = (await workspacesOf(consenter.user.id)).map((w) => ({ id: w.id, name: w.name, role: w.role as Role }));
  const problem = error ?? (workspaces.length === 0 ? 'You are not a member of any workspace yet.' : undefined);
  renderConsentStep(res, request, params, consenter.user, consenter.credential, workspaces, problem);
}
