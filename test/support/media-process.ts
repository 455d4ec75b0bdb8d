import fs from 'node:fs';
import { languageModelsEnv, type LanguageModelsConfig } from '../../config/env';
import { freePort, startProcess, type ManagedProcess } from '../../scripts/infra/processes';
import { until } from './until';
import { TEST_DATA_KEYS_ENV } from './data-keys';
import { TEST_PAYLOAD_KEYS_ENV } from './payload-keys';

interface ServiceAddress {
  baseUrl: string;
  apiKey: string;
}

export interface MediaProcessOptions {
  mongodbUri: string;
  temporalAddress: string;
  namespace: string;
  authSecret: string;
  providers: { llm: LanguageModelsConfig; stt: ServiceAddress; tts: ServiceAddress };
  /** Where its output goes (read back when it fails to start). */
  logFile: string;
  nodeEnv?: 'test' | 'production';
  /** More settings for it (e.g. `PREPARED_GREETINGS: 'false'`). */
  env?: Record<string, string>;
}

export interface RunningMediaProcess {
  process: ManagedProcess;
  url: string;
}

/**
 * The media service as its own process (`media/server.ts`, as deployed) against given servers
 * and simulators: for the tests that kill it mid-call and for the benchmarks, where it must
 * not share an event loop with the rest. Resolves once it answers its health check.
 */
export async function startMediaProcess(options: MediaProcessOptions): Promise<RunningMediaProcess> {
  const port = await freePort();
  const { llm, stt, tts } = options.providers;
  const media = startProcess({
    name: 'media',
    command: process.execPath,
    args: ['--require', 'tsx/cjs', 'media/server.ts'],
    output: { file: options.logFile },
    env: {
      PATH: process.env.PATH,
      NODE_ENV: options.nodeEnv ?? 'test',
      LOG_LEVEL: 'warn',
      MONGODB_URI: options.mongodbUri,
      TEMPORAL_ADDRESS: options.temporalAddress,
      TEMPORAL_NAMESPACE: options.namespace,
      AUTH_SECRET: options.authSecret,
      // The test process seals stored secrets (tools' headers) with the test key.
      ...TEST_DATA_KEYS_ENV,
      HOST: '127.0.0.1',
      MEDIA_PORT: String(port),
      MEDIA_PUBLIC_URL: `ws://127.0.0.1:${port}`,
      ...languageModelsEnv(llm),
      STT_BASE_URL: stt.baseUrl,
      STT_API_KEY: stt.apiKey,
      TTS_BASE_URL: tts.baseUrl,
      TTS_API_KEY: tts.apiKey,
      TOOLS_ALLOW_PRIVATE_NETWORKS: 'true',
      ...TEST_PAYLOAD_KEYS_ENV,
      ...options.env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  let exited: number | string | null = null;
  void media.exited.then((code) => (exited = code));
  const healthy = await until(
    () =>
      fetch(`${url}/health`)
        .then((res) => res.ok)
        .catch(() => false),
    (ok) => ok || exited !== null,
    60_000,
    200,
  );
  if (!healthy) throw new Error(`the media process did not become healthy (exit ${exited}):\n${fs.readFileSync(options.logFile, 'utf8')}`);
  return { process: media, url };
}
