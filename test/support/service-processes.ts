import fs from 'node:fs';
import { appEntryArgs, type AppRole } from '../../scripts/infra/app-nodes';
import { freePort, startProcess, type ManagedProcess } from '../../scripts/infra/processes';
import { TEST_DATA_KEYS_ENV } from './data-keys';
import { TEST_PAYLOAD_KEYS_ENV } from './payload-keys';
import { until } from './until';

export interface ServiceProcessOptions {
  role: AppRole;
  mongodbUri: string;
  temporalAddress: string;
  namespace: string;
  authSecret: string;
  logFile: string;
  /** More settings (METRICS_PORT, OTEL_EXPORTER_OTLP_ENDPOINT, WORKER_ROLES, ...). */
  env?: NodeJS.ProcessEnv;
}

export interface RunningServiceProcess {
  process: ManagedProcess;
  /** The API's or the media node's base URL (none for a worker). */
  url: string | null;
}

/**
 * One of the application's processes as deployed (its entry under tsx), against the test
 * servers, with no provider configured. Resolves once it serves: the API its health, the media
 * node its health, a worker the line it prints when it polls.
 */
export async function startServiceProcess(options: ServiceProcessOptions): Promise<RunningServiceProcess> {
  const port = await freePort();
  const proc = startProcess({
    name: options.role,
    command: process.execPath,
    args: appEntryArgs(options.role),
    output: { file: options.logFile },
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      MONGODB_URI: options.mongodbUri,
      TEMPORAL_ADDRESS: options.temporalAddress,
      TEMPORAL_NAMESPACE: options.namespace,
      AUTH_SECRET: options.authSecret,
      ...TEST_DATA_KEYS_ENV,
      ...TEST_PAYLOAD_KEYS_ENV,
      HOST: '127.0.0.1',
      ...(options.role === 'api' ? { PORT: String(port) } : {}),
      ...(options.role === 'media' ? { MEDIA_PORT: String(port), MEDIA_PUBLIC_URL: `ws://127.0.0.1:${port}` } : {}),
      ...options.env,
    },
  });
  let exited: number | string | null = null;
  void proc.exited.then((code) => (exited = code));
  const url = options.role === 'worker' ? null : `http://127.0.0.1:${port}`;
  const ready = async () => {
    if (options.role === 'api')
      return fetch(`${url}/api/v1/health`).then(
        (res) => res.status === 200,
        () => false,
      );
    if (options.role === 'media')
      return fetch(`${url}/health`).then(
        (res) => res.ok,
        () => false,
      );
    return fs.existsSync(options.logFile) && fs.readFileSync(options.logFile, 'utf8').includes('worker polling');
  };
  const ok = await until(ready, (served) => served || exited !== null, 120_000, 250);
  if (!ok) throw new Error(`the ${options.role} process did not start (exit ${exited}):\n${fs.readFileSync(options.logFile, 'utf8')}`);
  return { process: proc, url };
}

/** The metrics URL a process printed at start (`... metrics at http://.../metrics`). */
export function printedMetricsUrl(logFile: string): string {
  const match = /metrics at (http:\/\/\S+\/metrics)/.exec(fs.readFileSync(logFile, 'utf8'));
  if (!match) throw new Error(`no metrics address in ${logFile}:\n${fs.readFileSync(logFile, 'utf8')}`);
  return match[1];
}
