import path from 'node:path';
import { DATABASE_NAME, parsePort } from '../../config/env';
import type { ManagedProcess } from './processes';
import { startFerretDb } from './servers';

/**
 * What the two launchers (`npm start`, scripts/launch.ts; `npm run start:cluster`,
 * scripts/launch-cluster.ts) share: stopping everything once, in the launcher's order, on
 * Ctrl-C, SIGTERM or a process that must not die; killing the children if the launcher itself
 * dies without stopping them; and the banner once the stack is up.
 */
export interface Launcher {
  /** Stops the stack once (later calls do nothing: Ctrl-C twice, a crash while stopping), then exits with the code. */
  stopAll(exitCode: number): Promise<void>;
  stopping(): boolean;
  /** The stack stops if this process exits while it runs. */
  superviseExit(proc: ManagedProcess): void;
}

export function createLauncher(options: { stop: () => Promise<void>; running: () => ManagedProcess[] }): Launcher {
  let stopping = false;
  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    console.log('[launcher] stopping...');
    await options.stop();
    console.log('[launcher] stopped');
    process.exit(exitCode);
  };
  // Children run in their own process groups; if the launcher dies without stopping them,
  // take them down with it rather than leave servers holding the ports.
  process.on('exit', () => options.running().forEach((p) => p.child.kill('SIGKILL')));
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  return {
    stopAll,
    stopping: () => stopping,
    superviseExit: (proc) =>
      void proc.exited.then((code) => {
        if (stopping) return;
        console.error(`[launcher] ${proc.name} exited unexpectedly (${code}); stopping the stack`);
        void stopAll(1);
      }),
  };
}

/** The stack is up: what runs where, then how to stop it. */
export function printReady(title: string, lines: string[]): void {
  console.log(['', title, ...lines, 'Press Ctrl-C to stop.', ''].join('\n'));
}

/** A connection string without its password, for printing. */
export function redact(uri: string): string {
  return uri.replace(/\/\/([^@/]*)@/, '//***@');
}

/**
 * FerretDB with its data in `dataDir/ferretdb`, unless MONGODB_URI names a store to use: added
 * to `infrastructure`, supervised, and its URI (null when one was given).
 */
export async function startStoreUnlessGiven(
  env: NodeJS.ProcessEnv,
  dataDir: string,
  launcher: Pick<Launcher, 'superviseExit'>,
  infrastructure: ManagedProcess[],
): Promise<string | null> {
  if (env.MONGODB_URI) return null;
  console.log(`[launcher] starting FerretDB (data in ${path.join(dataDir, 'ferretdb')})`);
  const ferret = await startFerretDb({
    port: parsePort(env, 'MONGODB_PORT', 27017),
    dataDir: path.join(dataDir, 'ferretdb'),
    output: 'inherit-prefixed',
    ownProcessGroup: true,
  });
  infrastructure.push(ferret);
  launcher.superviseExit(ferret);
  return ferret.uri(DATABASE_NAME);
}

/**
 * The codec server the launched Temporal Web UI decodes payloads through (docs/decisions/0201):
 * the API's `/codec` as a browser on this machine reaches it, and TEMPORAL_UI_ORIGIN letting the
 * UI's page call it (as localhost and as 127.0.0.1) unless the environment names the origins.
 */
export function codecServerEnv(env: NodeJS.ProcessEnv, apiPort: number, uiPort: number): { endpoint: string; env: Record<string, string> } {
  const host = env.HOST && env.HOST !== '0.0.0.0' && env.HOST !== '::' ? env.HOST : '127.0.0.1';
  const endpoint = `http://${host.includes(':') ? `[${host}]` : host}:${apiPort}/codec`;
  return { endpoint, env: env.TEMPORAL_UI_ORIGIN ? {} : { TEMPORAL_UI_ORIGIN: `http://localhost:${uiPort},http://127.0.0.1:${uiPort}` } };
}
