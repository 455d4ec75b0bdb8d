import { Router } from 'express';

/**
 * How every router of the app matches paths: letter case as written, no trailing slash, as
 * the access step identifies operations (api/operation-index.ts) and as the validator matches
 * them (it reads the app's `case sensitive routing` and `strict routing`). A router that read
 * `/Tools/Test` or `/tools/test/` as `/tools/test` would serve a spelling the access step
 * never identified (decision 0170).
 */
export const ROUTING_OPTIONS = { caseSensitive: true, strict: true } as const;

/** A router with the app's routing rules; route modules create theirs with it, never with `Router()`. */
export function apiRouter(): Router {
  return Router(ROUTING_OPTIONS);
}
