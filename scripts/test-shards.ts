/**
 * The whole test suite as several mocha processes at once (`npm test`; docs/decisions/0242).
 *
 * Most of the suite's time is spent waiting (a simulated call talks in real time), so on two
 * cores two processes take about half the time of one. Each shard is a plain serial mocha run
 * with the root hook's own FerretDB and Temporal dev server, exactly as a single run is: no test
 * shares a server, a database or a task queue with a test of another shard.
 *
 * Usage: tsx scripts/test-shards.ts --jobs N [-- mocha options]
 * Each shard's report is printed whole when it ends, then the totals, in mocha's own words
 * ("N passing", "N failing"), which CI reads.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

interface ShardResult {
  index: number;
  files: number;
  exitCode: number;
  seconds: number;
  log: string;
}

function testFiles(): string[] {
  return (fs.readdirSync(path.join(ROOT, 'test'), { recursive: true }) as string[])
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => path.join('test', file))
    .sort();
}

/**
 * Files dealt round-robin from the sorted list: a folder's files (the call tests, the API's
 * validation sweeps) take similar times, so each shard gets its share of every kind.
 */
export function dealShards(files: string[], jobs: number): string[][] {
  const shards: string[][] = Array.from({ length: jobs }, () => []);
  files.forEach((file, i) => shards[i % jobs]!.push(file));
  return shards.filter((shard) => shard.length > 0);
}

/** The counts of mocha's spec summary ("  12 passing (3m)", "  1 failing", "  2 pending"). */
export function summaryCounts(log: string): { passing: number; failing: number; pending: number } {
  const count = (word: string) => {
    const matches = [...log.matchAll(new RegExp(`^ *(\\d+) ${word}\\b`, 'gm'))];
    return matches.length ? Number(matches[matches.length - 1]![1]) : 0;
  };
  return { passing: count('passing'), failing: count('failing'), pending: count('pending') };
}

function runShard(index: number, files: string[], mochaArgs: string[], dir: string, children: Set<ChildProcess>): Promise<ShardResult> {
  const log = path.join(dir, `shard-${index + 1}.log`);
  const out = fs.openSync(log, 'w');
  const started = Date.now();
  const child = spawn(process.execPath, [require.resolve('mocha/bin/mocha.js'), '--exit', ...mochaArgs, ...files], {
    cwd: ROOT,
    stdio: ['ignore', out, out],
  });
  children.add(child);
  return new Promise((resolve) => {
    let ended = false;
    // A child that cannot be spawned may report both 'error' and 'exit': it ends once.
    const done = (exitCode: number) => {
      if (ended) return;
      ended = true;
      children.delete(child);
      fs.closeSync(out);
      resolve({ index, files: files.length, exitCode, seconds: (Date.now() - started) / 1000, log: fs.readFileSync(log, 'utf8') });
    };
    child.once('exit', (code, signal) => done(code ?? (signal ? 1 : 0)));
    child.once('error', (err) => {
      if (!ended) fs.writeSync(out, `mocha could not start: ${err.message}\n`);
      done(1);
    });
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const jobs = Number(argv[argv.indexOf('--jobs') + 1]);
  if (!argv.includes('--jobs') || !Number.isInteger(jobs) || jobs < 1) throw new Error('usage: tsx scripts/test-shards.ts --jobs N [-- mocha options]');
  const dashDash = argv.indexOf('--');
  const mochaArgs = dashDash >= 0 ? argv.slice(dashDash + 1) : [];
  const shards = dealShards(testFiles(), jobs);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-test-shards-'));
  const children = new Set<ChildProcess>();
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      for (const child of children) child.kill(signal);
    });

  const started = Date.now();
  console.log(`[test] ${shards.length} mocha processes at once over ${shards.reduce((n, s) => n + s.length, 0)} files (TEST_JOBS=1 for one)`);
  const results = await Promise.all(
    shards.map((files, index) =>
      runShard(index, files, mochaArgs, dir, children).then((result) => {
        // Printed whole as each ends, so that two reports never interleave.
        console.log(`\n[test] shard ${index + 1} of ${shards.length}: ${result.files} files, exit ${result.exitCode}, ${Math.round(result.seconds)} s`);
        process.stdout.write(result.log);
        return result;
      }),
    ),
  );
  fs.rmSync(dir, { recursive: true, force: true });

  const totals = results
    .map((r) => summaryCounts(r.log))
    .reduce((a, b) => ({ passing: a.passing + b.passing, failing: a.failing + b.failing, pending: a.pending + b.pending }));
  const minutes = Math.round((Date.now() - started) / 60_000);
  console.log(`\n[test] all ${shards.length} shards: ${results.map((r) => `shard ${r.index + 1} ${Math.round(r.seconds)} s`).join(', ')}`);
  console.log(`  ${totals.passing} passing (${minutes}m)`);
  if (totals.pending) console.log(`  ${totals.pending} pending`);
  if (totals.failing) console.log(`  ${totals.failing} failing`);
  const failed = results.filter((r) => r.exitCode !== 0);
  if (failed.length) {
    console.log(`[test] failed: shard ${failed.map((r) => `${r.index + 1} (exit ${r.exitCode})`).join(', ')}; each shard's report above says which tests`);
    process.exitCode = 1;
  }
}

if (require.main === module)
  main().catch((error: Error) => {
    console.error(`[test] ${error.message}`);
    process.exit(1);
  });
