import { createRequire } from 'node:module';

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => unknown;
interface PathToRegexpModule {
  pathToRegexp: PathToRegexp & { compiledOnce?: true };
}

/**
 * express-openapi-validator (5.6) finds the operation of every request by compiling each
 * documented route with path-to-regexp until one matches (`lookupRoute` in its
 * `openapi.metadata.js`): with about a hundred paths, that is up to a hundred regular
 * expressions built per request, about a third of a small request's CPU in a profile
 * (docs/benchmarks.md, "Keyed requests"). Upstream has an open change that caches them
 * (cdimascio/express-openapi-validator#1217); until it ships, this keeps each compiled route
 * in the path-to-regexp module the validator loads.
 *
 * Only calls with a string path and at most the `sensitive` and `strict` options (what the
 * validator passes) are cached; others go to path-to-regexp as they are. The same inputs
 * always compile to the same result, and the cached regular expression has no global or
 * sticky flag, so `exec` keeps no state between requests. Idempotent.
 */
export function cacheValidatorRouteMatchers(): void {
  const fromValidator = createRequire(require.resolve('express-openapi-validator'));
  const module = fromValidator('path-to-regexp') as PathToRegexpModule;
  if (module.pathToRegexp.compiledOnce) return;
  const compile = module.pathToRegexp;
  const byOptions = new Map<string, Map<string, unknown>>();
  const cached: PathToRegexpModule['pathToRegexp'] = (path, options) => {
    if (typeof path !== 'string' || (options && Object.keys(options).some((key) => key !== 'sensitive' && key !== 'strict'))) return compile(path, options);
    const signature = `${options?.sensitive === true}|${options?.strict === true}`;
    let compiled = byOptions.get(signature);
    if (!compiled) byOptions.set(signature, (compiled = new Map()));
    let result = compiled.get(path);
    if (result === undefined) compiled.set(path, (result = compile(path, options)));
    return result;
  };
  cached.compiledOnce = true;
  module.pathToRegexp = cached;
}
