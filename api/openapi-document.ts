import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { listedTimeZones } from '../domain/shared/time';

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

let served: Record<string, unknown> | undefined;

/**
 * The document as `/openapi.json` serves it: the contract with the time zones this server
 * knows filled in as the `TimeZone` schema's `enum` (the list depends on the runtime's zone
 * data, so it is not written in the YAML). Clients and fuzzers see which zones are valid; the
 * timezone middleware enforces the same list with the contract's 400, before the validator,
 * which works from the plain document.
 */
export function servedOpenApiDocument(): Record<string, unknown> {
  if (!served) {
    const document = structuredClone(openApiDocument()) as { components?: { schemas?: Record<string, Record<string, unknown>> } };
    const zone = document.components?.schemas?.TimeZone;
    if (!zone) throw new Error('schemas/openapi.yaml has no components.schemas.TimeZone');
    zone.enum = listedTimeZones();
    served = document as Record<string, unknown>;
  }
  return served;
}
