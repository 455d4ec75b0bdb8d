import fs from 'node:fs';

/**
 * CPU priority of the processes a launcher starts on one host (docs/decisions/0245). The
 * callee's audio goes through the API's answer, FerretDB and a media node; the workflows'
 * bookkeeping (worker nodes, the Temporal server and its PostgreSQL) can wait some
 * milliseconds without anyone hearing it. When both want the cores, as in a burst of answers,
 * the bookkeeping runs at a lower priority (`nice`): it still gets every cycle the audio path
 * leaves, so nothing is slower while the host has room.
 */
export const BACKGROUND_NICENESS = 10;
/** The same for container runtimes (docker-compose.yml's `cpu_shares`): the kernel's weight of nice 10, against 1024 at nice 0. */
export const BACKGROUND_CPU_SHARES = 110;

/** `nice`, where the system has it (coreutils); without it every process runs at the launcher's own priority. */
const NICE = ['/usr/bin/nice', '/bin/nice'].find((file) => fs.existsSync(file)) ?? null;

/**
 * The command and arguments that start `command` at `niceness` below the launcher's priority:
 * through `nice`, which sets the priority before the program starts, so every thread it makes
 * has it (a priority set afterwards on Linux reaches only the process's first thread).
 */
export function atNiceness(command: string, args: string[], niceness: number): { command: string; args: string[] } {
  if (niceness <= 0 || !NICE) return { command, args };
  return { command: NICE, args: ['-n', String(niceness), command, ...args] };
}
