import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { connectMongo, disconnectMongo } from '../../db/connect';
import { newId } from '../../db/ids';
import { forceLocalFirstAttempts } from '../../domain/webhooks/first-attempts';
import { WebhookAttempt, type WebhookAttemptDocument } from '../../db/models/webhook-attempt';
import { WebhookDelivery, type WebhookDeliveryDocument } from '../../db/models/webhook-delivery';
import { recordEvent, type RecordEventInput } from '../../domain/webhooks/fan-out';
import { ROOT, startProcess, type ManagedProcess } from '../../scripts/infra/processes';
import { startDisposableServers, type DisposableServers } from '../support/disposable-servers';
import { startWebhookReceiver, type ReceivedWebhook, type ReceiverBehaviour, type WebhookReceiver } from '../support/webhook-receiver';
import { receiverAccepts, storedEndpoint } from '../support/webhooks';
import { TEST_DATA_KEYS_ENV, useTestDataKeys } from '../support/data-keys';
import { TEST_PAYLOAD_KEYS_ENV, testEncryption } from '../support/payload-keys';

/**
 * `npm run reliability:webhooks`: webhook deliveries survive a worker that dies mid-flight.
 *
 * On a FerretDB and a Temporal dev server of its own, with the `webhooks` worker as a child
 * process (as `npm start` runs it), this fans out 1,000 events to one endpoint whose receiver
 * answers 200, except 503 to the first request of every 10th delivery (those go through the
 * 10 s retry). Once a third of the deliveries have reached the receiver the worker is killed
 * with SIGKILL and a new one started. When every delivery is terminal (or after 5 minutes),
 * it checks that each was delivered, that the stored attempts justify each status, that the
 * receiver saw every delivery (duplicates only as identical, signed re-sends) and nothing
 * else. Exit code 0 when every check passes; on a failure the logs and data are kept.
 */

const EVENTS = 1_000;
const FAN_OUT_CONCURRENCY = 50;
/** The first request of every 10th delivery to arrive is answered 503. */
const FLAKY_EVERY = 10;
const KILL_AFTER_DELIVERIES = Math.ceil(EVENTS / 3);
const WORKER_READY_MS = 120_000;
const KILL_WAIT_MS = 180_000;
/**
 * After the fan-out: how long every delivery may take to become terminal. On FerretDB this
 * takes about 3 minutes (each attempt's update scans the stored deliveries); the bound only
 * ends a broken run.
 */
const SETTLE_MS = 300_000;

interface Check {
  name: string;
  ok: boolean;
  details: string[];
}

interface Run {
  servers?: DisposableServers;
  workers: ManagedProcess[];
  receiver?: WebhookReceiver;
  client?: Client;
}

async function main(): Promise<boolean> {
  const run: Run = { workers: [] };
  // The last resort if this process dies without its cleanup: no server or worker survives it.
  process.on('exit', () => [...run.workers, ...(run.servers?.processes ?? [])].forEach((proc) => proc.child.kill('SIGKILL')));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp(run, false).finally(() => process.exit(1)));

  let passed = false;
  try {
    passed = await exercise(run);
  } catch (error) {
    console.error(`\nFAILED to run: ${(error as Error).stack ?? error}`);
  } finally {
    await cleanUp(run, passed);
  }
  return passed;
}

async function exercise(run: Run): Promise<boolean> {
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const log = (line: string) => console.log(`[${elapsed()}] ${line}`);

  log('starting FerretDB and the Temporal dev server');
  const servers = await startDisposableServers('vas-reliability-webhooks-');
  run.servers = servers;
  await connectMongo(servers.mongodbUri);
  useTestDataKeys();
  const flaky = new Set<string>();
  const receiver = await startWebhookReceiver(firstRequestOfEveryTenthFails(flaky));
  run.receiver = receiver;
  const endpoint = await storedEndpoint({ url: `${receiver.url}/hooks` });
  // The fan-out marks first attempts local as one beside the webhooks worker does (issue 18),
  // so worker 1 dies with local activities in flight; what the fan-out remembers is in this
  // process, so the worker reads the store instead (the fast path's fallback).
  forceLocalFirstAttempts(true);
  run.client = new Client({
    connection: await Connection.connect({ address: servers.temporalAddress, plugins: [testEncryption.plugin] }),
    namespace: servers.namespace,
  });

  log('starting worker 1');
  const first = await startWorker(run, 1);
  log(`worker 1 polling; fanning out ${EVENTS} events (${FAN_OUT_CONCURRENCY} at a time)`);
  const fanOut = fanOutEvents(run.client, endpoint.workspaceId);

  const killed = await waitFor(() => distinctDeliveries(receiver.received) >= KILL_AFTER_DELIVERIES, KILL_WAIT_MS);
  if (!killed)
    throw new Error(`only ${distinctDeliveries(receiver.received)} deliveries reached the receiver within ${KILL_WAIT_MS / 1000} s; worker 1 never got killed`);
  first.child.kill('SIGKILL');
  await first.exited;
  const atKill = { distinct: distinctDeliveries(receiver.received), posts: receiver.received.length };
  log(`worker 1 killed (SIGKILL) after ${atKill.distinct} deliveries reached the receiver (${atKill.posts} POSTs)`);

  log('starting worker 2');
  await startWorker(run, 2);
  log('worker 2 polling');
  const recorded = await fanOut;
  log(
    `fan-out done: ${recorded.deliveryIds.length} deliveries recorded${recorded.retries ? `, recordEvent repeated ${recorded.retries} times after errors` : ''}`,
  );

  const terminal = await waitForTerminal(endpoint.workspaceId, recorded.deliveryIds.length, SETTLE_MS);
  log(
    `${terminal} of ${recorded.deliveryIds.length} deliveries terminal${terminal < recorded.deliveryIds.length ? ` when the ${SETTLE_MS / 1000} s limit passed` : ''}`,
  );
  // Stop the worker before checking, so nothing changes under the checks.
  await Promise.all(run.workers.map((worker) => worker.stop()));
  log('worker 2 stopped; checking');

  const deliveries = await WebhookDelivery.find({ workspace_id: endpoint.workspaceId }).lean<WebhookDeliveryDocument[]>();
  const attempts = await WebhookAttempt.find({}).lean<WebhookAttemptDocument[]>();
  const checks = [
    checkDeliveries(recorded.deliveryIds, deliveries),
    checkAttempts(deliveries, attempts),
    checkReceived(deliveries, attempts, receiver.received),
    await checkForeignAndSignatures(receiver.received, new Set(recorded.deliveryIds), endpoint.secret),
  ];

  const attemptsOf = groupBy(attempts, (a) => a.delivery_id);
  const retried = [...flaky].filter((id) => (attemptsOf.get(id)?.length ?? 0) > 1).length;
  console.log('\nWebhook deliveries with a worker killed mid-flight');
  console.log(`  ${EVENTS} events, 1 endpoint; worker 1 killed after ${atKill.distinct} deliveries had reached the receiver`);
  console.log(`  ${flaky.size} deliveries answered 503 first; ${retried} of them have more than one attempt recorded`);
  console.log(`  ${receiver.received.length} POSTs received for ${distinctDeliveries(receiver.received)} deliveries; ${attempts.length} attempts recorded`);
  for (const check of checks) {
    console.log(`${check.ok ? 'PASS' : 'FAIL'}  ${check.name}`);
    for (const detail of check.details) console.log(`      ${detail}`);
  }
  const ok = checks.every((check) => check.ok);
  console.log(`\n${ok ? 'PASSED' : 'FAILED'}: ${checks.filter((check) => check.ok).length} of ${checks.length} checks passed (${elapsed()})`);
  return ok;
}

/** 200, but 503 to the first request of every 10th delivery to arrive (its id goes into `flaky`). */
function firstRequestOfEveryTenthFails(flaky: Set<string>): ReceiverBehaviour {
  const seen = new Set<string>();
  return (request) => {
    const id = String(request.headers['x-service-delivery']);
    if (seen.has(id)) return { status: 200 };
    seen.add(id);
    if (seen.size % FLAKY_EVERY !== 0) return { status: 200 };
    flaky.add(id);
    return { status: 503, body: 'busy, try again' };
  };
}

/** workers/main.ts as `npm start` runs it (this Node with the same TypeScript loader). */
async function startWorker(run: Run, n: number): Promise<ManagedProcess> {
  const servers = run.servers as DisposableServers;
  const logFile = path.join(servers.tempDir, `worker-${n}.log`);
  const worker = startProcess({
    name: `worker-${n}`,
    command: process.execPath,
    args: [...process.execArgv, path.join(ROOT, 'workers', 'main.ts')],
    env: {
      ...process.env,
      NODE_ENV: 'development',
      ...TEST_DATA_KEYS_ENV,
      WORKER_ROLES: 'webhooks',
      MONGODB_URI: servers.mongodbUri,
      TEMPORAL_ADDRESS: servers.temporalAddress,
      TEMPORAL_NAMESPACE: servers.namespace,
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: 'warn',
      ...TEST_PAYLOAD_KEYS_ENV,
    },
    output: { file: logFile },
  });
  run.workers.push(worker);
  let exited: number | string | undefined;
  void worker.exited.then((code) => (exited = code));
  const ready = await waitFor(() => {
    if (exited !== undefined) throw new Error(`worker ${n} exited (${exited}) before polling; see ${logFile}`);
    return fs.existsSync(logFile) && fs.readFileSync(logFile, 'utf8').includes('worker polling');
  }, WORKER_READY_MS);
  if (!ready) throw new Error(`worker ${n} did not poll within ${WORKER_READY_MS / 1000} s; see ${logFile}`);
  return worker;
}

/**
 * recordEvent for each event, as the fan-out activity would run it: repeated after an error
 * (the database may refuse a write under load; a repeat creates nothing twice).
 */
async function fanOutEvents(client: Client, workspaceId: string): Promise<{ deliveryIds: string[]; retries: number }> {
  const deliveryIds: string[] = [];
  let retries = 0;
  let next = 0;
  const one = async (sequence: number) => {
    const input: RecordEventInput = {
      workspaceId,
      callId: newId(),
      agentId: '',
      sequence,
      type: 'call.ended',
      message: 'the call ended',
      level: 'info',
      latencyMs: null,
      data: { duration_seconds: sequence % 300 },
      createdAt: new Date().toISOString(),
    };
    for (let attempt = 1; ; attempt++) {
      try {
        const recorded = await recordEvent(input, { temporal: client, now: () => new Date() });
        deliveryIds.push(...recorded.deliveryIds);
        return;
      } catch (error) {
        if (attempt === 10) throw error;
        retries++;
        await sleep(Math.min(1000 * 2 ** (attempt - 1), 10_000));
      }
    }
  };
  await Promise.all(
    Array.from({ length: FAN_OUT_CONCURRENCY }, async () => {
      while (next < EVENTS) await one(next++);
    }),
  );
  return { deliveryIds, retries };
}

async function waitForTerminal(workspaceId: string, total: number, timeoutMs: number): Promise<number> {
  let terminal = 0;
  await waitFor(async () => {
    terminal = await WebhookDelivery.countDocuments({ workspace_id: workspaceId, status: { $in: ['delivered', 'failed'] } });
    return terminal >= total;
  }, timeoutMs);
  return terminal;
}

function checkDeliveries(recordedIds: string[], deliveries: WebhookDeliveryDocument[]): Check {
  const stored = new Map(deliveries.map((d) => [d._id, d]));
  const missing = recordedIds.filter((id) => !stored.has(id));
  const notDelivered = deliveries.filter((d) => d.status !== 'delivered');
  const byStatus = countBy(deliveries, (d) => d.status);
  return {
    name: `all ${EVENTS} delivery records exist and every one is delivered`,
    ok: recordedIds.length === EVENTS && deliveries.length === EVENTS && missing.length === 0 && notDelivered.length === 0,
    details: [
      `fan-out returned ${recordedIds.length} delivery ids; ${deliveries.length} records stored; statuses: ${describeCounts(byStatus)}`,
      ...(missing.length ? [`missing records: ${sample(missing)}`] : []),
      ...(notDelivered.length ? [`not delivered: ${sample(notDelivered.map((d) => `${d._id} (${d.status}, ${d.attempt_count} attempts)`))}`] : []),
    ],
  };
}

/** delivered <=> the last attempt is 2xx, and attempt_count is the number of attempt records. */
function checkAttempts(deliveries: WebhookDeliveryDocument[], attempts: WebhookAttemptDocument[]): Check {
  const attemptsOf = groupBy(attempts, (a) => a.delivery_id);
  const ids = new Set(deliveries.map((d) => d._id));
  const problems: string[] = [];
  for (const delivery of deliveries) {
    const mine = (attemptsOf.get(delivery._id) ?? []).sort(attemptOrder);
    const last = mine[mine.length - 1];
    const lastOk = last ? is2xx(last.status_code) : false;
    if ((delivery.status === 'delivered') !== lastOk)
      problems.push(`${delivery._id}: ${delivery.status} but its last attempt answered ${last?.status_code ?? 'nothing'}`);
    if (delivery.attempt_count !== mine.length) problems.push(`${delivery._id}: attempt_count ${delivery.attempt_count}, ${mine.length} attempt records`);
    const earlyOk = mine.slice(0, -1).filter((a) => is2xx(a.status_code));
    if (earlyOk.length) problems.push(`${delivery._id}: attempted again after a 2xx`);
  }
  const orphans = attempts.filter((a) => !ids.has(a.delivery_id));
  if (orphans.length) problems.push(`${orphans.length} attempt records of unknown deliveries: ${sample(orphans.map((a) => a._id))}`);
  const perDelivery = countBy(deliveries, (d) => `${attemptsOf.get(d._id)?.length ?? 0} attempt(s)`);
  return {
    name: 'each delivery status is justified by its attempt records',
    ok: problems.length === 0,
    details: [
      `attempts per delivery: ${describeCounts(perDelivery)}`,
      ...problems.slice(0, 10),
      ...(problems.length > 10 ? [`... ${problems.length - 10} more`] : []),
    ],
  };
}

/**
 * Every delivery reached the receiver; repeated POSTs of a delivery are identical (same
 * delivery header, the stored body byte for byte); each attempt that recorded an HTTP status
 * matches a POST that arrived. POSTs beyond the attempt records are duplicates: an attempt
 * repeated because the worker died (or the database failed) after sending it.
 */
function checkReceived(deliveries: WebhookDeliveryDocument[], attempts: WebhookAttemptDocument[], received: ReceivedWebhook[]): Check {
  const postsOf = groupBy(received, (r) => String(r.headers['x-service-delivery']));
  const attemptsOf = groupBy(attempts, (a) => a.delivery_id);
  const problems: string[] = [];
  let duplicates = 0;
  let duplicated = 0;
  for (const delivery of deliveries) {
    const posts = postsOf.get(delivery._id) ?? [];
    if (!posts.length) problems.push(`${delivery._id}: never reached the receiver`);
    const otherBodies = posts.filter((post) => post.rawBody !== delivery.request_body);
    if (otherBodies.length) problems.push(`${delivery._id}: ${otherBodies.length} of ${posts.length} POSTs carry a body other than the stored one`);
    const answered = (attemptsOf.get(delivery._id) ?? []).filter((a) => a.status_code !== null).length;
    if (posts.length < answered) problems.push(`${delivery._id}: ${answered} attempts record an answer but only ${posts.length} POSTs arrived`);
    const extra = posts.length - (attemptsOf.get(delivery._id)?.length ?? 0);
    if (extra > 0) {
      duplicates += extra;
      duplicated++;
    }
  }
  return {
    name: 'the receiver saw every delivery; repeated POSTs carry the same delivery id and raw body',
    ok: problems.length === 0,
    details: [
      `${duplicates} duplicate POSTs (beyond the recorded attempts) for ${duplicated} deliveries`,
      ...problems.slice(0, 10),
      ...(problems.length > 10 ? [`... ${problems.length - 10} more`] : []),
    ],
  };
}

/** No POST names a delivery the fan-out did not make; every signature verifies as a receiver checks it. */
async function checkForeignAndSignatures(received: ReceivedWebhook[], known: Set<string>, secret: string): Promise<Check> {
  const unknown = received.filter((r) => !known.has(String(r.headers['x-service-delivery'])));
  const unsigned: string[] = [];
  for (const request of received) {
    // Checked as of the request's arrival, as the receiver would have.
    if (!(await receiverAccepts(request, secret, Math.floor(request.at / 1000)))) unsigned.push(String(request.headers['x-service-delivery']));
  }
  return {
    name: 'no POST for an unknown delivery; every signature verifies',
    ok: unknown.length === 0 && unsigned.length === 0,
    details: [
      `${unknown.length} POSTs with an unknown delivery id${unknown.length ? `: ${sample(unknown.map((r) => String(r.headers['x-service-delivery'])))}` : ''}`,
      `${unsigned.length} of ${received.length} signatures refused${unsigned.length ? `: ${sample(unsigned)}` : ''}`,
    ],
  };
}

async function cleanUp(run: Run, passed: boolean): Promise<void> {
  await Promise.all(run.workers.map((worker) => worker.stop(5_000)));
  await run.receiver?.close();
  await run.client?.connection.close().catch(() => undefined);
  await disconnectMongo().catch(() => undefined);
  if (!run.servers) return;
  await run.servers.stop({ keepFiles: !passed });
  if (!passed) console.log(`Logs and data kept in ${run.servers.tempDir}`);
}

/** Attempts in the order the workflow made them: by time, then by the number in their id. */
function attemptOrder(a: WebhookAttemptDocument, b: WebhookAttemptDocument): number {
  const n = (attempt: WebhookAttemptDocument) => Number(attempt._id.split(':').pop());
  return a.at.getTime() - b.at.getTime() || n(a) - n(b);
}

const is2xx = (status: number | null | undefined) => typeof status === 'number' && status >= 200 && status < 300;
const distinctDeliveries = (received: ReceivedWebhook[]) => new Set(received.map((r) => r.headers['x-service-delivery'])).size;
const sample = (items: string[]) => items.slice(0, 5).join(', ') + (items.length > 5 ? `, ... (${items.length} in all)` : '');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

function describeCounts(counts: Map<string, number>): string {
  return (
    [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, n]) => `${n} ${key}`)
      .join(', ') || 'none'
  );
}

/** Polls `condition` every 500 ms; false once `timeoutMs` has passed without it holding. */
async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await sleep(500);
  }
}

void main().then((passed) => process.exit(passed ? 0 : 1));
