import type { AddressInfo } from 'node:net';
import express from 'express';
import { codecServerRoutes, CODEC_SERVER_PATH, type CodecServerDeps } from '../../api/codec-server';
import { errorHandler } from '../../api/middleware/errors';
import { testEncryption } from './payload-keys';

/** The staff credential of the tests' codec servers (CODEC_SERVER_TOKEN). */
export const TEST_CODEC_SERVER_TOKEN = 'test-codec-server-token-0123456789abcdef';
/** The Temporal Web UI origin the tests' codec servers allow (TEMPORAL_UI_ORIGIN). */
export const TEST_UI_ORIGIN = 'http://localhost:8233';

/** The codec server as the API serves it in production, with the tests' key, token and UI origin. */
export function testCodecServer(overrides: Partial<CodecServerDeps> = {}): CodecServerDeps {
  return { codec: testEncryption.codec, token: TEST_CODEC_SERVER_TOKEN, uiOrigins: [TEST_UI_ORIGIN], openOnLoopback: false, ...overrides };
}

let standalone: Promise<string> | undefined;

/**
 * The codec server's endpoint for the Temporal CLI of helpers that run without an API
 * (test/support/temporal-cli.ts): the API's own routes on a port of their own, started once and
 * left to end with the run (unref'd).
 */
export function standaloneCodecEndpoint(): Promise<string> {
  standalone ??= new Promise((resolve) => {
    const app = express();
    app.use(codecServerRoutes(testCodecServer()));
    app.use(errorHandler({ info: () => undefined, error: () => undefined }));
    const server = app.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}${CODEC_SERVER_PATH}`));
    server.unref();
  });
  return standalone;
}
