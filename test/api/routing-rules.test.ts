import type { Client } from '@temporalio/client';
import { expect } from 'chai';
import { createApp } from '../../api/app';
import { openApiDocument } from '../../api/openapi-document';
import { isForTheApi } from '../../api/middleware/access';
import { TEST_AUTH_CONFIG } from '../support/api';

/**
 * The second layer of decision 0170, checked apart from the access step that stands before
 * it: every router of the app matches paths case-sensitively and strictly (no trailing
 * slash), and every route it has is an operation of the contract or one of the few paths
 * served outside it. A router created with `Router()` (case-insensitive, lenient) fails here
 * even though the access step would still refuse `/Tools/Test` first.
 */

interface RouterLike {
  caseSensitive?: boolean;
  strict?: boolean;
  stack: { handle: unknown; route?: { path: string } }[];
}

function isRouter(handle: unknown): handle is RouterLike {
  return typeof handle === 'function' && Array.isArray((handle as Partial<RouterLike>).stack);
}

/** Every router of the app (its own included) and the path of every route they hold. */
function walk(router: RouterLike, routers: RouterLike[] = [], routes: string[] = []): { routers: RouterLike[]; routes: string[] } {
  routers.push(router);
  for (const layer of router.stack) {
    if (layer.route) routes.push(layer.route.path);
    else if (isRouter(layer.handle)) walk(layer.handle, routers, routes);
  }
  return { routers, routes };
}

/** Paths served outside the contract's operations: the document itself, MCP and the OAuth server. */
const OUTSIDE_THE_DOCUMENT = [
  /^(\/api(\/v1)?)?\/openapi\.json$/,
  /^\/mcp$/,
  /^\/oauth\/(authorize|token|register|revoke)$/,
  /^\/\.well-known\/oauth-(authorization-server|protected-resource)(\/mcp)?$/,
];

describe('routing rules (decision 0170)', () => {
  const app = createApp({
    config: {
      defaultTimezone: 'Asia/Kolkata',
      validateResponses: false,
      roundTripWaitMs: 1000,
      auth: TEST_AUTH_CONFIG,
      welcomeCreditsPaise: 0,
      toolsAllowPrivateNetworks: false,
    },
    temporal: {} as Client,
  }) as unknown as { router: RouterLike; enabled(setting: string): boolean };
  const { routers, routes } = walk(app.router);

  it('the app routes case-sensitively and strictly', () => {
    expect(app.enabled('case sensitive routing')).to.equal(true);
    expect(app.enabled('strict routing')).to.equal(true);
  });

  it('so does every router in it', () => {
    expect(routers.length).to.be.greaterThan(20);
    const lenient = routers.filter((r) => r.caseSensitive !== true || r.strict !== true);
    expect(lenient.length, 'routers created without apiRouter()').to.equal(0);
  });

  it('every route is an operation of the contract or a path served outside it', () => {
    const documented = new Set(Object.keys((openApiDocument() as { paths: object }).paths));
    const strays = routes.filter((path) => !documented.has(path.replace(/:(\w+)/g, '{$1}')) && !OUTSIDE_THE_DOCUMENT.some((p) => p.test(path)));
    expect(routes.length).to.be.greaterThan(100);
    expect(strays).to.deep.equal([]);
  });

  it('any spelling of a path under /api is the access step’s to answer', () => {
    for (const path of [
      '/api',
      '/api/v1/x',
      '/API/V1/Tools/Test',
      '/%61pi/v1/x',
      '/%41PI',
      '//api/x',
      '/./api/x',
      '/x/../api/x',
      '/api;x=1/v1/x',
      '\\api\\v1',
      '/Api%2Fv1',
      '/api/v1/..%2f..%2fmcp',
    ]) {
      expect(isForTheApi(path), path).to.equal(true);
    }
    for (const path of ['/', '/mcp', '/oauth/token', '/.well-known/oauth-authorization-server', '/openapi.json', '/apiary', '/api/../mcp']) {
      expect(isForTheApi(path), path).to.equal(false);
    }
  });
});
