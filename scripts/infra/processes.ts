import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { atNiceness } from './cpu-priority';

/** The repository root, from source (tsx) and from dist/ alike. */
export const ROOT = [path.resolve(__dirname, '../..'), path.resolve(__dirname, '../../..')].find((dir) =>
  fs.existsSync(path.join(dir, 'package.json')),
) as string;

export const TOOLS_DIR = process.env.TOOLS_DIR || path.join(ROOT, '.tools');
export const TOOL_PATHS = {
  temporal: path.join(TOOLS_DIR, 'bin', 'temporal'),
  ferretdb: path.join(TOOLS_DIR, 'bin', 'ferretdb'),
  temporalTestServer: path.join(TOOLS_DIR, 'temporal-test-server', 'temporal-test-server'),
  // The cluster profile (`npm run start:cluster`): `install-tools.sh cluster`.
  temporalServer: path.join(TOOLS_DIR, 'bin', 'temporal-server'),
  temporalSqlTool: path.join(TOOLS_DIR, 'bin', 'temporal-sql-tool'),
  temporalUiServer: path.join(TOOLS_DIR, 'bin', 'temporal-ui-server'),
  // The recordings' object-storage tests (SeaweedFS, an S3-compatible server): `install-tools.sh s3`.
  weed: path.join(TOOLS_DIR, 'bin', 'weed'),
};

const CLUSTER_TOOLS = new Set<keyof typeof TOOL_PATHS>(['temporalServer', 'temporalSqlTool', 'temporalUiServer']);

export function requireTool(tool: keyof typeof TOOL_PATHS): string {
  const file = TOOL_PATHS[tool];
  if (!fs.existsSync(file))
    throw new Error(
      `${file} is missing; run \`npm run tools${CLUSTER_TOOLS.has(tool) ? ' -- cluster' : tool === 'weed' ? ' -- s3' : ''}\` (scripts/install-tools.sh)`,
    );
  return file;
}

/** A port the OS reports free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** What starting one of the local data servers (FerretDB, PostgreSQL) takes. */
export interface LocalDataServerOptions {
  host?: string;
  port: number;
  /** The server's own data folder (kept across restarts). */
  dataDir: string;
  /** Trade durability for speed (tests): the server skips syncing its writes to disk. */
  fast?: boolean;
  output: StartOptions['output'];
  ownProcessGroup?: boolean;
  niceness?: StartOptions['niceness'];
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where output goes: 'inherit-prefixed' prints lines as `[name] ...`; a path appends to a file. */
  output: 'inherit-prefixed' | { file: string };
  /**
   * Run in a process group of its own, so a terminal's Ctrl-C reaches only the parent, which
   * then stops its children in order.
   */
  ownProcessGroup?: boolean;
  /** Run as this user and group (PostgreSQL, which refuses to run as root). */
  uid?: number;
  gid?: number;
  /** Run this much below the launcher's CPU priority (`nice`: docs/decisions/0245); 0 or absent: the same. */
  niceness?: number;
}

export function startProcess(options: StartOptions): ManagedProcess {
  const { command, args } = atNiceness(options.command, options.args, options.niceness ?? 0);
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownProcessGroup ?? false,
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid } : {}),
  });
  if (options.output === 'inherit-prefixed') {
    for (const stream of [child.stdout, child.stderr]) prefixLines(stream, `[${options.name}] `);
  } else {
    const log = fs.createWriteStream(options.output.file, { flags: 'a' });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
  }
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    child.once('error', (err) => resolve(`spawn failed: ${err.message}`));
  });
  return {
    name: options.name,
    child,
    exited,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

function prefixLines(stream: NodeJS.ReadableStream | null, prefix: string): void {
  if (!stream) return;
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) process.stdout.write(prefix + line + '\n');
  });
  stream.on('end', () => pending && process.stdout.write(prefix + pending + '\n'));
}

/** Waits until something accepts TCP connections on host:port; fails early if `proc` exits. */
export async function waitForPort(host: string, port: number, timeoutMs: number, proc?: ManagedProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitedWith: number | string | undefined;
  void proc?.exited.then((code) => (exitedWith = code));
  while (Date.now() < deadline) {
    if (exitedWith !== undefined) throw new Error(`${proc?.name} exited (${exitedWith}) before listening on ${host}:${port}`);
    if (await canConnect(host, port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listened on ${host}:${port} within ${timeoutMs} ms${proc ? ` (${proc.name})` : ''}`);
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
