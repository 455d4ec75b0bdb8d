import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startProcess, waitForPort, type LocalDataServerOptions, type ManagedProcess } from './processes';

/** The role Temporal connects as (trust authentication on loopback: a local server of our own). */
export const POSTGRES_USER = 'temporal';

/** `dataDir` is the cluster's data folder (created with initdb on first start); `fast`: no fsync, no synchronous commit. */
export type PostgresOptions = LocalDataServerOptions;

export interface RunningPostgres extends ManagedProcess {
  host: string;
  port: number;
  /** True when this start ran initdb (a fresh, empty server). */
  created: boolean;
}

/**
 * PostgreSQL from the Debian package's binaries, on its own port and data folder. PostgreSQL
 * refuses to run as root; as root (containers, CI) the server runs as the `postgres` system
 * user the package creates, which then owns the data folder.
 */
export async function startPostgres(options: PostgresOptions): Promise<RunningPostgres> {
  const host = options.host ?? '127.0.0.1';
  const bin = postgresBinDir();
  const runAs = serverUser();
  const created = !fs.existsSync(path.join(options.dataDir, 'PG_VERSION'));
  if (created) {
    fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    if (runAs) {
      fs.chownSync(options.dataDir, runAs.uid, runAs.gid);
      makeTraversable(options.dataDir);
    }
    execFileSync(path.join(bin, 'initdb'), ['-D', options.dataDir, '-U', POSTGRES_USER, '--auth=trust', '-E', 'UTF8', '--locale=C'], {
      stdio: 'pipe',
      ...runAs,
    });
  }
  const settings = [
    `listen_addresses=${host}`,
    `port=${options.port}`,
    // The socket goes in the data folder: /var/run/postgresql may not exist or be writable.
    `unix_socket_directories=${options.dataDir}`,
    // Temporal's four services each hold a pool (persistence maxConns 20, visibility 10).
    'max_connections=200',
    // Checkpoints and connections are routine; warnings and errors still print.
    'log_min_messages=warning',
    'log_checkpoints=off',
    ...(options.fast ? ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'] : []),
  ];
  const proc = startProcess({
    name: 'postgres',
    command: path.join(bin, 'postgres'),
    args: ['-D', options.dataDir, ...settings.flatMap((setting) => ['-c', setting])],
    output: options.output,
    ownProcessGroup: options.ownProcessGroup,
    niceness: options.niceness,
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
  });
  await waitForPort(host, options.port, 60_000, proc);
  return { ...proc, host, port: options.port, created };
}

/** PG_BIN, or the newest /usr/lib/postgresql/<version>/bin (Debian's layout), or pg_config's. */
export function postgresBinDir(): string {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const debian = '/usr/lib/postgresql';
  if (fs.existsSync(debian)) {
    const versions = fs
      .readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => path.join(debian, v, 'bin')));
  }
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // no pg_config on PATH: the other candidates decide
  }
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'postgres')) && fs.existsSync(path.join(dir, 'initdb')));
  if (!found)
    throw new Error(
      'PostgreSQL 12 or newer is missing: install it (Debian: apt-get install postgresql) or set PG_BIN to the folder holding `postgres` and `initdb`',
    );
  return found;
}

/** The postgres system user when running as root (PostgreSQL will not run as root), else none. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('running as root, PostgreSQL needs the `postgres` system user (Debian: apt-get install postgresql creates it)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * The postgres user must reach the data folder through its parents; a temporary folder from
 * mkdtemp is 0700. Parents below the system's temporary folder or the user's home get the
 * search bit for others (no read: nothing is listed).
 */
function makeTraversable(dataDir: string): void {
  const stops = new Set(['/', os.tmpdir(), os.homedir()]);
  for (let dir = path.dirname(dataDir); !stops.has(dir); dir = path.dirname(dir)) {
    const mode = fs.statSync(dir).mode;
    if ((mode & 0o001) === 0) fs.chmodSync(dir, mode | 0o001);
  }
}
