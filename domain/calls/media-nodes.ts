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
  const nodes = await MediaNode.find(
    { seen_at: { $gte: new Date(now.getTime() - MEDIA_NODE_STALE_MS) }, draining: false },
    { url: 1, task_queue: 1, live_calls: 1 },
  ).lean();
  if (nodes.length === 0) return null;
  const weights = nodes.map((n) => 1 / (1 + Math.max(0, n.live_calls)));
  let pick = random() * weights.reduce((a, b) => a + b, 0);
  const chosen = nodes.find((_, i) => (pick -= weights[i]!) < 0) ?? nodes.at(-1)!;
  return { url: chosen.url, taskQueue: chosen.task_queue };
}

/**
 * The media node of an answered outbound call: the one a first answer request wrote on the call
 * record, or else `chosen`, written now (a provider that asks again, after an answer it never
 * got, must send the audio where the conversation runs). `call-over` when the call is final or
 * unknown: the provider is told to hang up.
 */
export async function claimMediaNode(callId: string, chosen: MediaNodeChoice, attempts = 2): Promise<MediaNodeChoice | 'call-over'> {
  // One write on the answer's path (a findAndModify costs FerretDB a read and a write); only a
  // repeated answer, or one for a call that is over, reads the record after.
  const { modifiedCount } = await Call.updateOne(
    { _id: callId, media_node_url: null, status: { $nin: FINAL_CALL_STATUSES } },
    { $set: { media_node_url: chosen.url, media_node_task_queue: chosen.taskQueue } },
  );
  if (modifiedCount === 1) return chosen;
  const call = await Call.findById(callId, { status: 1, media_node_url: 1, media_node_task_queue: 1 }).lean();
  if (!call || FINAL_CALL_STATUSES.includes(call.status)) return 'call-over';
  // Live and unclaimed after all (a write between the two): claim again.
  if (!call.media_node_url) return attempts > 1 ? claimMediaNode(callId, chosen, attempts - 1) : 'call-over';
  return { url: call.media_node_url, taskQueue: call.media_node_task_queue! };
}
