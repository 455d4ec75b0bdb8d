import path from 'node:path';
import { BACKGROUND_NICENESS } from './cpu-priority';
import { ROOT, startProcess, waitForPort, type ManagedProcess, type StartOptions } from './processes';

/** The three processes of the application, each runnable as many nodes. */
export type AppRole = 'api' | 'worker' | 'media';

const ENTRIES: Record<AppRole, string> = { api: 'api/server', worker: 'workers/main', media: 'media/server' };
/** Workers are the workflows' bookkeeping; the API's answer and the media nodes carry the callee's audio (docs/decisions/0245). */
export const NICENESS: Record<AppRole, number> = { api: 0, worker: BACKGROUND_NICENESS, media: 0 };

export interface AppNode {
  role: AppRole;
  /** `api-1`, `media-2`, ... */
  name: string;
  /** The port it listens on (api and media; none for workers). */
  port?: number;
  process: ManagedProcess;
}

export interface AppNodeOptions {
  role: AppRole;
  index: number;
  host: string;
  /** Port of an api or media node. */
  port?: number;
  /** The environment every node shares (servers, providers, secrets). */
  env: NodeJS.ProcessEnv;
  output: StartOptions['output'];
  ownProcessGroup?: boolean;
}

/**
 * Starts one node. Each api node gets its PORT and each media node its MEDIA_PORT and
 * MEDIA_PUBLIC_URL: a call's conversation records the node that runs it, and the answer URL
 * then sends the provider's audio to that node's public address, not to any media node.
 */
export async function startAppNode(options: AppNodeOptions): Promise<AppNode> {
  const name = `${options.role}-${options.index}`;
  const env: NodeJS.ProcessEnv = { ...options.env };
  if (options.role === 'api') env.PORT = String(options.port);
  if (options.role === 'media') {
    env.MEDIA_PORT = String(options.port);
    env.MEDIA_PUBLIC_URL = `ws://${options.host}:${options.port}`;
  }
  const proc = startProcess({
    name,
    command: process.execPath,
    args: appEntryArgs(options.role),
    env: { ...env, HOST: options.host },
    output: options.output,
    ownProcessGroup: options.ownProcessGroup,
    niceness: NICENESS[options.role],
  });
  // Generous: several nodes start at once, each compiling its code (tsx) or loading it.
  if (options.port !== undefined) await waitForPort(options.host, options.port, 180_000, proc);
  return { role: options.role, name, port: options.port, process: proc };
}

/**
 * How to run a role's entry: the compiled file under dist/ when this module is compiled (npm
 * start builds first), else the TypeScript source through tsx (tests, benchmarks).
 */
export function appEntryArgs(role: AppRole): string[] {
  if (path.extname(__filename) === '.js') return [path.resolve(__dirname, '..', '..', ENTRIES[role] + '.js')];
  return ['--require', 'tsx/cjs', path.join(ROOT, ENTRIES[role] + '.ts')];
}
