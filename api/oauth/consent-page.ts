import type { Response } from 'express';
import { AUTHORIZATION_PARAMS, type AuthorizationRequest } from './authorization-request';
import type { ConsentCredential } from './consent-session';

/**
 * The consent page, rendered on the server. It has no script: every step is a form that
 * posts back to `/oauth/authorize` with the OAuth parameters in hidden fields (each post is
 * checked again from scratch) and what proves who is consenting: the member signs in with
 * email and password (and two-factor code) on the page, or the console posts the member's
 * session token in `session_token`. Passwords are only ever posted, never put in a URL.
 */

export interface WorkspaceChoice {
  id: string;
  name: string;
  role: string;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function hiddenFields(params: Record<string, unknown>): string {
  return AUTHORIZATION_PARAMS.filter((name) => typeof params[name] === 'string')
    .map((name) => `<input type="hidden" name="${name}" value="${escapeHtml(params[name] as string)}">`)
    .join('\n');
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem; color: #1b1b1b; }
.error { color: #a40000; }
label, select, input[type=password], input[type=email], input[type=text] { display: block; width: 100%; margin: 0.5rem 0; }
details { margin-top: 2rem; }
button { margin: 1rem 0.5rem 0 0; padding: 0.5rem 1rem; }
code { word-break: break-all; }
</style>
</head>
<body>
${body}
</body>
</html>`;
}

/**
 * Sends a page with headers that keep it out of frames (clickjacking) and caches, and
 * scripts out altogether. `form-action` must also allow the client's redirect URI: browsers
 * apply it to the redirect that follows the form post.
 */
function send(res: Response, status: number, html: string, redirectUri?: string, headers: Record<string, string> = {}): void {
  const formAction = ["'self'", ...(redirectUri ? [new URL(redirectUri).origin] : [])].join(' ');
  res
    .status(status)
    .set({
      ...headers,
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    })
    .send(html);
}

function appLine(request: AuthorizationRequest): string {
  return `<p><strong>${escapeHtml(request.client.client_name)}</strong> asks to connect to your Voice Agent Service workspace.
It will act as you, limited to what an API key may do (agents, calls, numbers, webhooks, balance; never your account,
members, invites, business details or top-ups). It will return to <code>${escapeHtml(request.redirectUri)}</code>.</p>`;
}

/** How a step answers when something went wrong: the status, what to say, and the headers (`Retry-After`). */
export interface StepProblem {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

function problemLine(problem: StepProblem | undefined): string {
  return problem ? `<p class="error" role="alert">${escapeHtml(problem.message)}</p>` : '';
}

/** A sign-in step's page: its heading names the app; a problem sets the status and headers. */
function sendStep(res: Response, request: AuthorizationRequest, problem: StepProblem | undefined, body: string): void {
  send(
    res,
    problem?.status ?? 200,
    layout('Connect an app', `<h1>Connect ${escapeHtml(request.client.client_name)}</h1>\n${body}`),
    request.redirectUri,
    problem?.headers,
  );
}

/**
 * Step 1: who is signing in. A person signs in with email and password; the console, which
 * holds the member's session token, posts it in the second form instead.
 */
export function renderSignInStep(
  res: Response,
  request: AuthorizationRequest,
  params: Record<string, unknown>,
  options: { problem?: StepProblem; email?: string } = {},
): void {
  const { problem, email } = options;
  sendStep(
    res,
    request,
    problem,
    `${appLine(request)}
${problemLine(problem)}
<form method="post" action="/oauth/authorize" id="sign-in">
${hiddenFields(params)}
<label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="username" required maxlength="254" value="${escapeHtml(email ?? '')}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required maxlength="128">
<button type="submit">Sign in</button>
</form>
<details>
<summary>Connecting from the console? Use your session token</summary>
<form method="post" action="/oauth/authorize" id="session-token">
${hiddenFields(params)}
<label for="session_token">Your session token (from signing in)</label>
<input type="password" id="session_token" name="session_token" autocomplete="off" required>
<button type="submit">Continue</button>
</form>
</details>`,
  );
}

/** Step 1b: the password was right and the account has two-factor on: the code. */
export function renderTwoFactorStep(
  res: Response,
  request: AuthorizationRequest,
  params: Record<string, unknown>,
  challengeToken: string,
  problem?: StepProblem,
): void {
  sendStep(
    res,
    request,
    problem,
    `<p>Your account has two-factor sign-in on: enter the 6-digit code from your authenticator app.</p>
${problemLine(problem)}
<form method="post" action="/oauth/authorize" id="two-factor">
${hiddenFields(params)}
<input type="hidden" name="challenge_token" value="${escapeHtml(challengeToken)}">
<label for="code">Code</label>
<input type="text" id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required>
<button type="submit">Verify</button>
</form>`,
  );
}

/** Step 2: the signed-in member picks a workspace and approves or denies. */
export function renderConsentStep(
  res: Response,
  request: AuthorizationRequest,
  params: Record<string, unknown>,
  who: { name: string; email: string },
  credential: ConsentCredential,
  workspaces: WorkspaceChoice[],
  error?: string,
): void {
  const options = workspaces.map((w) => `<option value="${escapeHtml(w.id)}">${escapeHtml(w.name)} (${escapeHtml(w.role)})</option>`).join('\n');
  send(
    res,
    error ? 400 : 200,
    layout(
      'Connect an app',
      `<h1>Connect ${escapeHtml(request.client.client_name)}</h1>
<p>Signed in as ${escapeHtml(who.name)} (${escapeHtml(who.email)}).</p>
${appLine(request)}
${problemLine(error ? { status: 400, message: error } : undefined)}
<form method="post" action="/oauth/authorize" id="consent">
${hiddenFields(params)}
<input type="hidden" name="${credential.field}" value="${escapeHtml(credential.value)}">
<label for="workspace_id">Workspace</label>
<select id="workspace_id" name="workspace_id" required>
${options}
</select>
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
    ),
    request.redirectUri,
  );
}

/** A request we cannot send back to the client (unknown client, unregistered redirect URI). */
export function renderErrorPage(res: Response, message: string): void {
  send(res, 400, layout('Cannot connect this app', `<h1>Cannot connect this app</h1>\n<p class="error">${escapeHtml(message)}</p>`));
}
