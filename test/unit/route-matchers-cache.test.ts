import { createRequire } from 'node:module';
import { expect } from 'chai';
import { cacheValidatorRouteMatchers } from '../../api/route-matchers-cache';

type Compiled = { regexp: RegExp; keys: { name: string }[] };
/** The path-to-regexp module express-openapi-validator loads (the one the cache replaces a function of). */
const validatorsPathToRegexp = () =>
  (createRequire(require.resolve('express-openapi-validator'))('path-to-regexp') as { pathToRegexp: (path: unknown, options?: object) => Compiled })
    .pathToRegexp;

describe('the validator route matchers cache (api/route-matchers-cache.ts)', () => {
  before(() => cacheValidatorRouteMatchers());

  it('compiles a route once per routing options, as the validator asks for it on every request', () => {
    const compile = validatorsPathToRegexp();
    const route = '/api/v1/calls/:call_id/events';
    const first = compile(route, { sensitive: false, strict: false });
    expect(compile(route, { sensitive: false, strict: false })).to.equal(first);
    expect(compile(route, { sensitive: true, strict: false }), 'other options, another matcher').to.not.equal(first);
    expect(compile('/api/v1/agents/:agent_id', { sensitive: false, strict: false })).to.not.equal(first);
  });

  it('matches as path-to-regexp does, request after request (no state kept in the shared expression)', () => {
    const compile = validatorsPathToRegexp();
    const route = '/api/v1/agents/:agent_id';
    for (const [path, id] of [
      ['/api/v1/agents/abc', 'abc'],
      ['/api/v1/agents/def', 'def'],
      ['/API/V1/AGENTS/xyz', 'xyz'],
    ] as const) {
      const { regexp, keys } = compile(route, { sensitive: false, strict: false });
      const match = regexp.exec(path);
      expect(match?.[1], path).to.equal(id);
      expect(keys.map((k) => k.name)).to.deep.equal(['agent_id']);
    }
    expect(compile(route, { sensitive: false, strict: false }).regexp.exec('/api/v1/agents')).to.equal(null);
    expect(compile(route, { sensitive: true, strict: false }).regexp.exec('/API/V1/AGENTS/xyz'), 'case-sensitive routing').to.equal(null);
  });

  it('leaves calls with other options to path-to-regexp, and installs once', () => {
    const compile = validatorsPathToRegexp();
    const route = '/api/v1/batches/:batch_id';
    expect(compile(route, { end: false })).to.not.equal(compile(route, { end: false }));
    cacheValidatorRouteMatchers();
    expect(validatorsPathToRegexp()).to.equal(compile);
  });
});
