import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Request, type RequestHandler, type Router } from 'express';
import { apiRouter } from './routes/router';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { Config } from '../config/env';
import { HttpError } from '../domain/shared/http-error';
import { PayloadDecryptionError } from '../domain/shared/payload-encryption';

/**
 * The codec server (docs/decisions/0201): the Temporal Web UI and CLI send it the payloads of a
 * history and get them back decrypted (`/codec/decode`), or send what a person types (a signal's
 * input) to be encrypted (`/codec/encode`). Temporal's codec server protocol: `POST` a
 * `temporal.api.common.v1.Payloads` message as proto3 JSON (`{"payloads": [{"metadata":
 * {"encoding": "<base64>"}, "data": "<base64>"}]}`), the answer in the same shape; clients send
 * `X-Namespace`. Outside `/api`: not part of the public contract.
 *
 * A staff credential guards it, since it turns the histories back into callers' data:
 * `Authorization: Bearer <CODEC_SERVER_TOKEN>`. Browsers may call it only from the configured
 * UI origins (CORS); a preflight from another origin is refused.
 */
export const CODEC_SERVER_PATH = '/codec';

export interface CodecServerDeps {
  codec: PayloadCodec;
  /** CODEC_SERVER_TOKEN; null: none configured. */
  token: string | null;
  /** Origins of the Temporal Web UI (TEMPORAL_UI_ORIGIN) allowed to call from a browser. */
  uiOrigins: string[];
  /**
   * No token, and only this machine can reach the API (a development stack bound to loopback):
   * callers need none. The same trust as that stack's published development AUTH_SECRET.
   */
  openOnLoopback: boolean;
}

/** Whether a development API without CODEC_SERVER_TOKEN serves the codec to loopback callers. */
export function codecServerOpenOnLoopback(config: Pick<Config, 'env' | 'host' | 'codecServer'>): boolean {
  return config.env === 'development' && config.codecServer.token === null && isLoopbackHost(config.host);
}

/** A history's payloads fit: Temporal's payload size limit is 2 MB, base64 adds a third. */
const BODY_LIMIT = '8mb';
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Namespace';

export function codecServerRoutes(deps: CodecServerDeps): Router {
  const router = apiRouter();
  const expected = deps.token === null ? null : digest(deps.token);
  const origins = new Set(deps.uiOrigins);

  // CORS first, so that a refusal below still reaches the UI's page as a readable answer.
  router.use(CODEC_SERVER_PATH, (req, res, next) => {
    const origin = req.get('origin');
    if (origin !== undefined) {
      res.vary('Origin');
      if (!origins.has(origin.toLowerCase())) {
        next(new HttpError(403, `origin ${origin} may not use the codec server (TEMPORAL_UI_ORIGIN)`));
        return;
      }
      // The UI may send cookies (its "include credentials" setting): the origin is named, never `*`.
      res.set({ 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true' });
    }
    if (req.method === 'OPTIONS') {
      res
        .set({ 'Access-Control-Allow-Methods': 'POST, OPTIONS', 'Access-Control-Allow-Headers': ALLOWED_HEADERS, 'Access-Control-Max-Age': '600' })
        .status(204)
        .end();
      return;
    }
    next();
  });

  const authorised: RequestHandler = (req, _res, next) => {
    if (expected === null) {
      if (deps.openOnLoopback && isLoopbackPeer(req)) return next();
      return next(new HttpError(503, 'the codec server is not configured: set CODEC_SERVER_TOKEN (docs/operations.md, "Callers\' data in Temporal")'));
    }
    const presented = /^Bearer (.+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!presented || !timingSafeEqual(digest(presented), expected)) {
      return next(new HttpError(401, 'the codec server needs Authorization: Bearer <CODEC_SERVER_TOKEN>', {}, { 'WWW-Authenticate': 'Bearer realm="codec"' }));
    }
    next();
  };

  for (const operation of ['encode', 'decode'] as const) {
    router.post(`${CODEC_SERVER_PATH}/${operation}`, authorised, express.json({ limit: BODY_LIMIT, type: () => true }), async (req, res) => {
      const payloads = parsePayloads(req.body);
      try {
        const result = operation === 'encode' ? await deps.codec.encode(payloads) : await deps.codec.decode(payloads);
        res.set('Cache-Control', 'no-store').json({ payloads: result.map(payloadToJson) });
      } catch (err) {
        if (err instanceof PayloadDecryptionError) throw new HttpError(422, err.message);
        throw err;
      }
    });
  }
  return router;
}

interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

/** proto3 JSON carries bytes as base64, standard or URL-safe, padded or not. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function parsePayloads(body: unknown): Payload[] {
  const payloads = (body as { payloads?: unknown } | null)?.payloads;
  if (body === null || typeof body !== 'object' || Array.isArray(body) || (payloads !== undefined && !Array.isArray(payloads)))
    throw new HttpError(400, 'the body must be a Payloads message as JSON: {"payloads": [{"metadata": {...}, "data": "<base64>"}]}');
  return ((payloads ?? []) as unknown[]).map((item, index) => {
    const payload = item as JsonPayload;
    const bad = (what: string) => new HttpError(400, `payloads[${index}]: ${what}`);
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw bad('must be an object');
    if (payload.metadata != null && (typeof payload.metadata !== 'object' || Array.isArray(payload.metadata)))
      throw bad('metadata must be an object of base64 values');
    const metadata: Record<string, Uint8Array> = {};
    for (const [key, value] of Object.entries(payload.metadata ?? {})) {
      if (typeof value !== 'string' || !BASE64.test(value)) throw bad(`metadata.${key} must be base64`);
      metadata[key] = Buffer.from(value, 'base64');
    }
    if (payload.data != null && (typeof payload.data !== 'string' || !BASE64.test(payload.data))) throw bad('data must be base64');
    return { metadata, data: Buffer.from(payload.data ?? '', 'base64') };
  });
}

function payloadToJson(payload: Payload): JsonPayload {
  const metadata = Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]));
  return { metadata, data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64') };
}

/** Equal-length digests, so that the comparison takes the same time whatever was sent. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function isLoopbackPeer(req: Request): boolean {
  const address = req.socket.remoteAddress ?? '';
  return isLoopbackHost(address.replace(/^::ffff:/, ''));
}
