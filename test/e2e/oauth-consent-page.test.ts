import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { totpCode } from '../../api/auth/totp';
import { activeOwner, memberWithRole, type SignedUp } from '../support/accounts';
import { jsonBody, startApi, type RunningApi } from '../support/api';
import { authorizationUrl, bearer, pkcePair, registerApp, tokenRequest } from '../api/oauth/oauth-driver';
import { connectMcp } from '../api/mcp/mcp-client';

/** Debian's chromium (scripts/setup.sh installs it). */
const CHROMIUM = '/usr/bin/chromium';

/** The app's side of the redirect: a tiny HTTP server whose `/callback` catches what the browser brings back. */
interface RedirectCatcher {
  url: string;
  hits: URL[];
  close(): Promise<void>;
}

async function redirectCatcher(): Promise<RedirectCatcher> {
  const hits: URL[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (url.pathname === '/callback') hits.push(url);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Connected</title><p>You can close this tab.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/callback`, hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * The OAuth consent page in a real browser: headless Chromium (Debian's, driven by
 * playwright-core) opens the authorization URL an app built, the person signs in with email
 * and password (and their two-factor code), picks a workspace and allows; the browser is
 * sent to the app's redirect URI, a local HTTP server here, which receives the code. On top,
 * the MCP SDK's own client runs the whole connection and calls a tool. Real API and database.
 */
describe('the OAuth consent page in headless Chromium', function () {
  this.timeout(120_000);
  let api: RunningApi;
  let catcher: RedirectCatcher;
  let context: BrowserContext;
  let owner: SignedUp;
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oauth-consent-'));

  before(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run npm run setup (it installs Debian's chromium)`);
    api = await startApi();
    catcher = await redirectCatcher();
    owner = await activeOwner(api, { workspace_name: 'Acme Support' });
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context.setDefaultTimeout(15_000); // a missing field or button fails the test soon, not after 30 s
  });
  after(async () => {
    await context?.close();
    await catcher?.close();
    await api?.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  });

  /** A new tab that remembers every URL it requested (no password may ever be in one). */
  async function tab(): Promise<{ page: Page; urls: string[] }> {
    const page = await context.newPage();
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));
    return { page, urls };
  }

  /** Fills the sign-in form and submits it; answers the status of the page that comes back. */
  async function signIn(page: Page, email: string, password: string): Promise<number> {
    await page.fill('#email', email);
    await page.fill('#password', password);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/oauth/authorize') && r.request().method() === 'POST'),
      page.click('#sign-in button[type=submit]'),
    ]);
    await page.waitForLoadState();
    return response.status();
  }

  /** Picks the workspace and clicks Allow; answers where the browser landed (the app's redirect URI). */
  async function allow(page: Page, workspaceId: string): Promise<URL> {
    await page.selectOption('#workspace_id', workspaceId);
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(catcher.url)), page.click('button[value=approve]')]);
    return new URL(page.url());
  }

  /** A person with their own workspace who is also a developer in the owner's: two to pick from. */
  async function personInTwoWorkspaces(): Promise<SignedUp> {
    return memberWithRole(api, owner.workspaceId, 'developer');
  }

  it('from the app’s redirect to the code at its redirect URI: sign in with email and password, pick the workspace, Allow', async () => {
    const person = await personInTwoWorkspaces();
    const client = await registerApp(api, { client_name: 'Desk Assistant', redirect_uris: [catcher.url] });
    const { verifier, challenge } = pkcePair();
    const { page, urls } = await tab();

    await page.goto(authorizationUrl(api, client, challenge, { state: 'browser-state' }));
    expect(await page.locator('h1').textContent()).to.equal('Connect Desk Assistant');
    expect(await signIn(page, person.email, person.password)).to.equal(200);

    // The workspace step: both of the person's workspaces, named.
    expect(await page.locator('p', { hasText: 'Signed in as' }).textContent()).to.include(person.email);
    const offered = await page.locator('#workspace_id option').evaluateAll((options) => options.map((o) => (o as { value: string }).value));
    expect(offered.sort()).to.deep.equal([person.workspaceId, owner.workspaceId].sort());
    expect(await page.locator('#workspace_id').textContent()).to.include('Acme Support (developer)');

    const back = await allow(page, owner.workspaceId);
    expect(catcher.hits.map((hit) => hit.toString())).to.include(back.toString());
    expect(back.searchParams.get('state')).to.equal('browser-state');
    expect(back.searchParams.get('iss')).to.equal(api.baseUrl);
    const code = back.searchParams.get('code') as string;
    expect(code).to.be.a('string').and.not.equal('');
    expect(
      urls.filter((url) => url.includes(encodeURIComponent(person.password)) || url.includes(person.password)),
      'a URL with the password',
    ).to.deep.equal([]);

    // The code is the app's: it exchanges for tokens that act in the workspace the person picked.
    const res = await tokenRequest(api, {
      grant_type: 'authorization_code',
      client_id: client.client_id,
      code,
      code_verifier: verifier,
      redirect_uri: catcher.url,
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    const tokens = await res.json();
    const me = await (await api.request('/api/v1/auth/me', { headers: bearer(tokens.access_token) })).json();
    expect(me.workspace.id).to.equal(owner.workspaceId);
    expect(me.user.id).to.equal(person.userId);
    await page.close();
  });

  it('a wrong password keeps the person on the page with the login’s error, and no code is issued', async () => {
    const person = await personInTwoWorkspaces();
    const client = await registerApp(api, { client_name: 'Desk Assistant', redirect_uris: [catcher.url] });
    const { page, urls } = await tab();
    const hitsBefore = catcher.hits.length;
    await page.goto(authorizationUrl(api, client, pkcePair().challenge));

    expect(await signIn(page, person.email, 'not the password')).to.equal(401);
    expect(new URL(page.url()).pathname).to.equal('/oauth/authorize');
    expect(await page.locator('.error').textContent()).to.equal('wrong email or password');
    expect(await page.inputValue('#email')).to.equal(person.email);
    expect(await page.inputValue('#password')).to.equal('');
    expect(await page.locator('#workspace_id').count()).to.equal(0);

    // An address nobody has gets the very same page: the page does not tell who has an account.
    expect(await signIn(page, `nobody-${person.userId}@example.com`, 'not the password')).to.equal(401);
    expect(await page.locator('.error').textContent()).to.equal('wrong email or password');

    expect(catcher.hits.length, 'nothing reached the redirect URI').to.equal(hitsBefore);
    expect(
      urls.filter((url) => url.includes('not%20the%20password') || url.includes('not+the+password') || url.includes('password=')),
      'a URL with the password',
    ).to.deep.equal([]);

    // The right password still goes on from the same page.
    expect(await signIn(page, person.email, person.password)).to.equal(200);
    expect(await page.locator('#workspace_id').count()).to.equal(1);
    await page.close();
  });

  it('asks for the two-factor code after the password; a wrong code stays on the code step, the right one goes on to Allow', async () => {
    const person = await personInTwoWorkspaces();
    const secret = await enableTwoFactor(api, person);
    const client = await registerApp(api, { client_name: 'Desk Assistant', redirect_uris: [catcher.url] });
    const { verifier, challenge } = pkcePair();
    const { page } = await tab();
    const hitsBefore = catcher.hits.length;
    await page.goto(authorizationUrl(api, client, challenge, { state: 'two-factor' }));

    expect(await signIn(page, person.email, person.password)).to.equal(200);
    expect(await page.locator('#code').count(), 'the code step').to.equal(1);
    expect(await page.locator('#workspace_id').count()).to.equal(0);

    const wrongCode = String((Number(totpCode(secret, new Date())) + 1) % 1_000_000).padStart(6, '0');
    expect(await submitCode(page, wrongCode)).to.equal(401);
    expect(await page.locator('.error').textContent()).to.equal('wrong two-factor code');
    expect(await page.locator('#workspace_id').count()).to.equal(0);
    expect(catcher.hits.length).to.equal(hitsBefore);

    // Enabling spent the current step; the next step's code is valid within the drift window.
    expect(await submitCode(page, totpCode(secret, new Date(Date.now() + 30_000)))).to.equal(200);
    const back = await allow(page, owner.workspaceId);
    expect(back.searchParams.get('state')).to.equal('two-factor');
    const res = await tokenRequest(api, {
      grant_type: 'authorization_code',
      client_id: client.client_id,
      code: back.searchParams.get('code') as string,
      code_verifier: verifier,
      redirect_uri: catcher.url,
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    await page.close();
  });

  it('connects the MCP SDK’s own client through the page (its redirect, the person’s sign-in, finishAuth) and calls a tool', async () => {
    const person = await personInTwoWorkspaces();
    const store: { client?: OAuthClientInformationMixed; tokens?: OAuthTokens; verifier?: string; redirectedTo?: URL } = {};
    const provider: OAuthClientProvider = {
      redirectUrl: catcher.url,
      clientMetadata: {
        client_name: 'SDK Assistant',
        redirect_uris: [catcher.url],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      clientInformation: () => store.client,
      saveClientInformation: (info) => void (store.client = info),
      tokens: () => store.tokens,
      saveTokens: (tokens) => void (store.tokens = tokens),
      redirectToAuthorization: (url) => void (store.redirectedTo = url),
      saveCodeVerifier: (verifier) => void (store.verifier = verifier),
      codeVerifier: () => store.verifier as string,
    };
    const mcpUrl = new URL(`${api.baseUrl}/mcp`);

    // Without tokens, connecting makes the SDK discover, register and send the person to the page.
    const first = new Client({ name: 'sdk-assistant', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    let refused: unknown = null;
    await first.connect(transport).catch((error: unknown) => (refused = error));
    expect(refused, String(refused)).to.be.instanceOf(UnauthorizedError);
    expect(store.redirectedTo?.pathname).to.equal('/oauth/authorize');

    const { page } = await tab();
    await page.goto((store.redirectedTo as URL).toString());
    expect(await signIn(page, person.email, person.password)).to.equal(200);
    const back = await allow(page, owner.workspaceId);
    await page.close();

    // The app takes the code from its redirect URI, finishes, and connects again with its tokens.
    await transport.finishAuth(back.searchParams.get('code') as string);
    expect(store.tokens?.access_token).to.match(/^vao_/);
    const assistant = new Client({ name: 'sdk-assistant', version: '1.0.0' });
    await assistant.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const created = await assistant.callTool({ name: 'create_agent', arguments: { name: 'Connected through the page' } });
    expect(created.isError, JSON.stringify(created)).to.not.equal(true);
    const agent = JSON.parse((created.content as { text: string }[])[0].text);
    await assistant.close();

    // The agent is in the workspace the person picked, made by their app.
    const listed = await connectMcp(api, store.tokens!.access_token);
    const agents = (await listed.call('list_agents')).body as { id: string; name: string }[];
    await listed.close();
    expect(agents.find((a) => a.id === agent.id)?.name).to.equal('Connected through the page');
    const inWorkspace = await api.request(`/api/v1/agents/${agent.id}`, { headers: { ...owner.auth, 'X-Workspace-ID': owner.workspaceId } });
    expect(inWorkspace.status).to.equal(200);
  });
});

/** Turns two-factor sign-in on through the account API, as a person does; answers the secret. */
async function enableTwoFactor(api: RunningApi, person: SignedUp): Promise<string> {
  const setup = await (await api.request('/api/v1/account/2fa/setup', { method: 'POST', headers: person.auth })).json();
  const res = await api.request('/api/v1/account/2fa/enable', jsonBody({ code: totpCode(setup.secret, new Date()) }, person.auth));
  expect(res.status, await res.clone().text()).to.equal(200);
  return setup.secret;
}

async function submitCode(page: Page, code: string): Promise<number> {
  await page.fill('#code', code);
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/oauth/authorize') && r.request().method() === 'POST'),
    page.click('#two-factor button[type=submit]'),
  ]);
  await page.waitForLoadState();
  return response.status();
}
