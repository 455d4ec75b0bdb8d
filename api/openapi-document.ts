import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** Path of the contract; found from source (tsx) and from dist/ alike. */
export function openApiPath(): string {
  const candidates = [path.resolve(__dirname, '../schemas/openapi.yaml'), path.resolve(__dirname, '../../schemas/openapi.yaml')];
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) throw new Error(`schemas/openapi.yaml not found (looked in ${candidates.join(', ')})`);
  return found;
}

let cached: Record<string, unknown> | undefined;

/**
 * The OpenAPI document as parsed JSON (anchors and `<<` merge keys resolved), read once per
 * process. Every response reuses the shared header anchors, so the alias count is unlimited.
 */
export function openApiDocument(): Record<string, unknown> {
  cached ??= parse(fs.readFileSync(openApiPath(), 'utf8'), { merge: true, maxAliasCount: -1 }) as Record<string, unknown>;
  return cached;
}
