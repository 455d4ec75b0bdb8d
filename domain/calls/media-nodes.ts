import { setTimeout as sleep } from 'node:timers/promises';
import { Call, FINAL_CALL_STATUSES } from '../../db/models/call';
import { MediaNode } from '../../db/models/media-node';
import type { MediaNodeChoice } from '../../contracts/calls';

/**
 * The directory of media nodes (docs/decisions/0165). Each media node keeps its row fresh; the
 * API's answer to the provider chooses a node from the rows seen lately, so that the callee's
 * audio goes to a node at once, whatever the task queues' backlog.
 */

/** How often a node writes that it is alive. */
export const MEDIA_NODE_BEAT_MS = 1_000;
/** A row older than this is a node that stopped or died (nodes' clocks are taken to agree within a second). */
export const MEDIA_NODE_STALE_MS = 3_000;
/**
 * An API node answering calls reads the directory this often, beside the answers, and chooses
 * from what it read (docs/decisions/0234): a read per answer waited behind a burst's writes, up
 * to 190 ms of the callee's silence, and calls answered a second apart found any cache kept only
 * by the answers themselves too old.
 */
export const DIRECTORY_REFRESH_MS = 500;
/** The reading stops this long after the node's last answer (and starts again with the next). */
const DIRECTORY_KEPT_FOR_MS = 60_000;
/** The oldest directory an answer is chosen from (older, the answer reads it); a node leaving the directory goes on taking calls this long. */
export const DIRECTORY_MAX_AGE_MS = 2_000;

export interface MediaNodeIdentity {
  id: string;
  url: string;
  taskQueue: string;
}

export interface MediaNodeRegistration {
  /** Takes no new calls (the row says draining), then leaves the directory. */
  stop(): Promise<void>;
}

/**
 * Enters this node in the directory and keeps its row fresh (with the number of conversations it
 * holds) until `stop`. A failed write is retried at the next beat: a node that cannot reach the
 * database for a few seconds drops out of the choice, and comes back.
 */
export async function registerMediaNode(
  node: MediaNodeIdentity,
  liveCalls: () => number,
  onError: (error: unknown) => void = () => undefined,
  /** How long `stop` waits after leaving, while API nodes may still choose it from the directory they read. */
  leaveWaitMs: number = DIRECTORY_MAX_AGE_MS,
): Promise<MediaNodeRegistration> {
  const write = (draining: boolean) =>
    MediaNode.updateOne(
      { _id: node.id },
      { $set: { url: node.url, task_queue: node.taskQueue, live_calls: liveCalls(), draining, seen_at: new Date() }, $setOnInsert: { started_at: new Date() } },
      { upsert: true },
    );
  await write(false);
  let stopped = false;
  const beat = setInterval(() => {
    if (!stopped) write(false).catch(onError);
  }, MEDIA_NODE_BEAT_MS);
  beat.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(beat);
      await MediaNode.deleteOne({ _id: node.id }).catch(onError);
      // An API in this process forgets it at once; one elsewhere within the directory's oldest age.
      forgetReadDirectory();
      await sleep(leaveWaitMs);
    },
  };
}

/**
 * A media node for an answered call, among those seen lately and not draining: at random, each
 * weighted by 1 / (1 + its live calls), so that equal nodes share calls evenly and a busier node
 * gets fewer, without every API node piling onto the one that looked idlest a second ago. Null
 * when no node is alive.
 */
export async function chooseMediaNode(now: Date = new Date(), random: () => number = Math.random): Promise<MediaNodeChoice | null> {
  const { rows, fresh } = await directory();
  let nodes = aliveAt(now, rows);
  // None alive in a directory read earlier: a node may have started since.
  if (nodes.length === 0 && !fresh) nodes = aliveAt(now, await readDirectory());
  if (nodes.length === 0) return null;
  const weights = nodes.map((n) => 1 / (1 + Math.max(0, n.live_calls)));
  let pick = random() * weights.reduce((a, b) => a + b, 0);
  const chosen = nodes.find((_, i) => (pick -= weights[i]!) < 0) ?? nodes.at(-1)!;
  return { url: chosen.url, taskQueue: chosen.task_queue };
}

type DirectoryRow = { url: string; task_queue: string; live_calls: number; seen_at: Date };

/** The directory as this process last read it (rows not draining, whatever their age: the age is judged at each choice). */
let lastRead: { rows: DirectoryRow[]; at: number } | null = null;
let reading: Promise<DirectoryRow[]> | null = null;
/** Bumped when a node of this process leaves: a read started before is not kept. */
let generation = 0;

async function directory(): Promise<{ rows: DirectoryRow[]; fresh: boolean }> {
  keepDirectoryRead();
  if (lastRead && performance.now() - lastRead.at <= DIRECTORY_MAX_AGE_MS) return { rows: lastRead.rows, fresh: false };
  return { rows: await readDirectory(), fresh: true };
}

let lastAnswerAt = 0;
let reader: NodeJS.Timeout | null = null;

/** Reads the directory every DIRECTORY_REFRESH_MS from now until the answers stop. */
function keepDirectoryRead(): void {
  lastAnswerAt = performance.now();
  if (reader) return;
  reader = setInterval(() => {
    if (performance.now() - lastAnswerAt > DIRECTORY_KEPT_FOR_MS) {
      clearInterval(reader!);
      reader = null;
      return;
    }
    // A failed read keeps the last one, until it is too old to use: then the answer reads (and fails) itself.
    readDirectory().catch(() => undefined);
  }, DIRECTORY_REFRESH_MS);
  reader.unref();
}

/** One read at a time per process: the answers of a burst share it. */
function readDirectory(): Promise<DirectoryRow[]> {
  if (reading) return reading;
  const startedIn = generation;
  const read = MediaNode.find({ draining: false }, { url: 1, task_queue: 1, live_calls: 1, seen_at: 1 })
    .lean<DirectoryRow[]>()
    .then((rows) => {
      if (startedIn === generation) lastRead = { rows, at: performance.now() };
      return rows;
    })
    .finally(() => {
      if (reading === read) reading = null;
    });
  reading = read;
  return read;
}

function forgetReadDirectory(): void {
  generation += 1;
  lastRead = null;
  reading = null;
}

function aliveAt(now: Date, rows: DirectoryRow[]): DirectoryRow[] {
  const since = now.getTime() - MEDIA_NODE_STALE_MS;
  return rows.filter((row) => row.seen_at.getTime() >= since);
}

/**
 * A node seen this recently is taken for alive when its call's conversation never ran there
 * (docs/decisions/0241): longer than the stale age of the answer's choice, since a node starved
 * under a burst beats late, and a node that is really gone is only tried once more.
 */
export const MEDIA_NODE_ALIVE_FOR_RESTART_MS = 10_000;

/** Whether the node polling `taskQueue` wrote its row since `since` (draining or not: it still runs its calls). */
export async function mediaNodeSeenSince(taskQueue: string, since: Date): Promise<boolean> {
  return (await MediaNode.exists({ task_queue: taskQueue, seen_at: { $gte: since } })) !== null;
}

/**
 * The media node of an answered outbound call: the one a first answer request wrote on the call
 * record, or else `chosen`, written now with the answer's time (a provider that asks again, after
 * an answer it never got, must send the audio where the conversation runs). `call-over` when the
 * call is final or unknown: the provider is told to hang up.
 */
export async function claimMediaNode(callId: string, chosen: MediaNodeChoice, answeredAt: Date, attempts = 2): Promise<MediaNodeChoice | 'call-over'> {
  // One write on the answer's path (a findAndModify costs FerretDB a read and a write); only a
  // repeated answer, or one for a call that is over, reads the record after.
  const { modifiedCount } = await Call.updateOne(
    { _id: callId, media_node_url: null, status: { $nin: FINAL_CALL_STATUSES } },
    { $set: { media_node_url: chosen.url, media_node_task_queue: chosen.taskQueue, answered_at: answeredAt } },
  );
  if (modifiedCount === 1) return chosen;
  const call = await Call.findById(callId, { status: 1, media_node_url: 1, media_node_task_queue: 1 }).lean();
  if (!call || FINAL_CALL_STATUSES.includes(call.status)) return 'call-over';
  // Live and unclaimed after all (a write between the two): claim again.
  if (!call.media_node_url) return attempts > 1 ? claimMediaNode(callId, chosen, answeredAt, attempts - 1) : 'call-over';
  return { url: call.media_node_url, taskQueue: call.media_node_task_queue! };
}
