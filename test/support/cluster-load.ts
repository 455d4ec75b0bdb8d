import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import { Call, FINAL_CALL_STATUSES, LIVE_CALL_STATUSES } from '../../db/models/call';
import { CallEvent } from '../../db/models/call-event';
import { LedgerItem } from '../../db/models/ledger-item';
import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { balanceOf } from '../../domain/billing/ledger';
import type { CalleeScript } from '../../simulators/telephony/simulator';
import { startClusterStack, type ClusterStack } from './cluster';
import { fundedWorkspace, withJson } from './accounts';
import { storedEndpoint } from './webhooks';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver';

/**
 * A workspace loading the cluster: funded, with a concurrency limit, an agent, and a webhook
 * endpoint subscribed to every event on a receiver of this process. All requests go through
 * the load balancer, as a customer's would.
 */
export interface LoadWorkspace {
  workspaceId: string;
  headers: Record<string, string>;
  agentId: string;
  fromNumber: string;
  receiver: WebhookReceiver;
  close(): Promise<void>;
}

const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };
/** Plenty for hundreds of short calls (4 rupees a minute). */
const CREDITS_PAISE = 10_000_000;

const workspacesOf = new WeakMap<ClusterStack, number>();

export async function loadWorkspace(stack: ClusterStack, concurrencyLimit: number): Promise<LoadWorkspace> {
  // Each workspace holds a number of the pool of its own (a number has one holder).
  const used = workspacesOf.get(stack) ?? 0;
  const fromNumber = stack.providers.pool[used];
  if (!fromNumber) throw new Error(`the simulated pool has ${stack.providers.pool.length} numbers, fewer than the workspaces on this cluster`);
  workspacesOf.set(stack, used + 1);
  const { workspaceId, key } = await fundedWorkspace({ concurrencyLimit, creditsPaise: CREDITS_PAISE, callerNumber: fromNumber });
  const headers = { 'X-API-Key': key };
  const res = await fetch(
    `${stack.apiUrl}/api/v1/agents`,
    withJson('POST', { name: `load ${randomInt(1e9)}`, voice: { voice_id: 'meera', language: 'en-IN' }, welcome_message: 'Hi.', call: OPEN_HOURS }, headers),
  );
  if (res.status !== 201) throw new Error(`POST /agents answered ${res.status}: ${await res.text()}`);
  const agentId = ((await res.json()) as { id: string }).id;
  const receiver = await startWebhookReceiver();
  await storedEndpoint({ workspaceId, url: `${receiver.url}/hooks`, events: ['*'] });
  return { workspaceId, headers, agentId, fromNumber, receiver, close: () => receiver.close() };
}

/** Fresh callee numbers that answer and follow `script`. */
export function callees(stack: ClusterStack, count: number, script: CalleeScript): string[] {
  const numbers = Array.from({ length: count }, () => `+9197${String(randomInt(0, 100_000_000)).padStart(8, '0')}`);
  for (const number of numbers) stack.providers.telephony.setCallee(number, script);
  return numbers;
}

export interface Placement {
  to: string;
  /** HTTP status, or 0 for a network error (the connection was cut). */
  status: number;
  callId?: string;
  /** The error's `detail` when not 201. */
  detail?: string;
}

/** POST /calls for each number, `concurrency` at a time, through the load balancer; never retried. */
export async function placeCalls(stack: ClusterStack, workspace: LoadWorkspace, numbers: string[], concurrency = 10): Promise<Placement[]> {
  const placements: Placement[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < numbers.length) {
        const to = numbers[next++]!;
        try {
          const res = await fetch(
            `${stack.apiUrl}/api/v1/calls`,
            withJson('POST', { agent_id: workspace.agentId, to_number: to, from_number: workspace.fromNumber }, workspace.headers),
          );
          const body = (await res.json()) as { id?: string; detail?: unknown };
          placements.push({ to, status: res.status, ...(res.status === 201 ? { callId: body.id } : { detail: JSON.stringify(body.detail) }) });
        } catch {
          placements.push({ to, status: 0 });
        }
      }
    }),
  );
  return placements;
}

/** Resolves once the workspace has `count` calls, all in a final status; false at the deadline. */
export async function untilCallsFinal(workspaceId: string, count: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const final = await Call.countDocuments({ workspace_id: workspaceId, status: { $in: FINAL_CALL_STATUSES } });
    if (final >= count) return true;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  return false;
}

/**
 * Samples, every `everyMs`, the slot keeper's count of live calls (GET /workspace/limits) and
 * the calls stored as live; stop() answers the largest of each.
 */
export function sampleConcurrency(
  stack: ClusterStack,
  workspace: LoadWorkspace,
  everyMs = 250,
): { stop(): Promise<{ slotKeeperMax: number; storedLiveMax: number; samples: number }> } {
  let running = true;
  let slotKeeperMax = 0;
  let storedLiveMax = 0;
  let samples = 0;
  const loop = (async () => {
    while (running) {
      const [limits, live] = await Promise.all([
        fetch(`${stack.apiUrl}/api/v1/workspace/limits`, { headers: workspace.headers })
          .then((res) => (res.ok ? (res.json() as Promise<{ active_calls: number }>) : null))
          .catch(() => null),
        Call.countDocuments({ workspace_id: workspace.workspaceId, status: { $in: LIVE_CALL_STATUSES } }),
      ]);
      if (limits) slotKeeperMax = Math.max(slotKeeperMax, limits.active_calls);
      storedLiveMax = Math.max(storedLiveMax, live);
      samples++;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { slotKeeperMax, storedLiveMax, samples };
    },
  };
}

/**
 * Seconds each connected call's callee waited in silence: from the answer (`started_at`) to
 * the stream's arrival, which begins the live time (`duration_seconds`, up to `ended_at`).
 * Sorted, for percentiles.
 */
export async function answerToStreamSeconds(workspaceId: string): Promise<number[]> {
  const calls = await Call.find({ workspace_id: workspaceId }, { started_at: 1, ended_at: 1, duration_seconds: 1 }).lean();
  return calls
    .filter((c) => c.started_at && c.ended_at)
    .map((c) => (c.ended_at!.getTime() - c.started_at!.getTime()) / 1000 - (c.duration_seconds ?? 0))
    .sort((a, b) => a - b);
}

/** The largest number of calls whose [started_at, ended_at] overlap, from the stored calls. */
export async function maxOverlappingCalls(workspaceId: string): Promise<number> {
  const calls = await Call.find({ workspace_id: workspaceId }, { started_at: 1, ended_at: 1 }).lean();
  const edges = calls
    .flatMap((c) => (c.started_at && c.ended_at ? [[c.started_at.getTime(), 1] as const, [c.ended_at.getTime(), -1] as const] : []))
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let live = 0;
  let max = 0;
  for (const [, delta] of edges) max = Math.max(max, (live += delta));
  return max;
}

/** A node's log, read once for the stories of a failed run's calls. */
export interface NodeLog {
  name: string;
  lines: string[];
}

/** The logs of the given files (those still there), each read once. */
export function readNodeLogs(files: string[]): NodeLog[] {
  return files.filter((file) => fs.existsSync(file)).map((file) => ({ name: file.split('/').pop()!, lines: fs.readFileSync(file, 'utf8').split('\n') }));
}

/**
 * A call that failed the load test's audit (not completed, or charged nothing), told as its
 * record and event log tell it (times from its creation), with what the nodes logged about it,
 * so a failed load run says which call and why instead of only a status.
 */
export async function storyOfCall(callId: string, logs: NodeLog[]): Promise<string> {
  const call = await Call.findById(callId, {
    status: 1,
    hangup_by: 1,
    hangup_reason: 1,
    created_at: 1,
    answered_at: 1,
    started_at: 1,
    ended_at: 1,
    duration_seconds: 1,
    cost_paise: 1,
  }).lean();
  const events = await CallEvent.find({ call_id: callId }, { type: 1, message: 1, created_at: 1 }).sort({ sequence: 1 }).lean();
  const since = (at: Date) => `+${((at.getTime() - (call?.created_at?.getTime() ?? at.getTime())) / 1000).toFixed(1)} s`;
  return [
    `call ${callId}: ${call?.status} (hung up by ${call?.hangup_by ?? '-'}: ${call?.hangup_reason ?? '-'}), live ${call?.duration_seconds ?? '-'} s, ${call?.cost_paise ?? '-'} paise`,
    ...(['answered_at', 'started_at', 'ended_at'] as const).flatMap((field) => (call?.[field] ? [`  ${since(call[field])} ${field}`] : [])),
    ...events.map((e) => `  ${since(e.created_at)} ${e.type}: ${e.message}`),
    ...linesAboutCall(callId, logs),
  ].join('\n');
}

/** What the nodes logged about the call (its id in the line), the first few, for a failure's story. */
function linesAboutCall(callId: string, logs: NodeLog[]): string[] {
  const LINES_PER_CALL = 12;
  const found: string[] = [];
  for (const { name, lines } of logs) {
    for (const line of lines) {
      if (!line.includes(callId)) continue;
      found.push(`  [${name}] ${line.slice(0, 300)}`);
      if (found.length >= LINES_PER_CALL) return found;
    }
  }
  return found;
}

/**
 * The books and the deliveries of a workspace after its calls are over: each call's `call`
 * ledger items and cost, each call's count of `call.ended` events, the ledger's sum against
 * the balance, and deliveries by status against what the receiver got.
 */
export async function auditWorkspace(workspace: LoadWorkspace) {
  const { workspaceId } = workspace;
  const calls = await Call.find({ workspace_id: workspaceId }, { status: 1, cost_paise: 1, duration_seconds: 1 }).lean();
  const items = await LedgerItem.find({ workspace_id: workspaceId }, { kind: 1, call_id: 1, amount_paise: 1 }).lean();
  const callItems = new Map<string, number[]>();
  for (const item of items.filter((i) => i.kind === 'call')) callItems.set(item.call_id!, [...(callItems.get(item.call_id!) ?? []), item.amount_paise]);
  const ended = await CallEvent.aggregate<{ _id: string; count: number }>([
    { $match: { workspace_id: workspaceId, type: 'call.ended' } },
    { $group: { _id: '$call_id', count: { $sum: 1 } } },
  ]);
  const endedCount = new Map(ended.map((e) => [e._id, e.count]));
  const deliveries = await WebhookDelivery.find({ workspace_id: workspaceId }, { status: 1, event_id: 1 }).lean();
  const receivedIds = new Set(workspace.receiver.received.map((r) => (JSON.parse(r.rawBody) as { id: string }).id));
  const deliveredEvents = new Set(deliveries.map((d) => d.event_id));
  const eventIds = new Set((await CallEvent.find({ workspace_id: workspaceId }, { _id: 1 }).lean()).map((e) => String(e._id)));
  return {
    calls,
    /** Calls whose ledger items are not exactly one `call` item of -cost_paise (a paid call), or more than one item of 0 (a call that never went live). */
    misCharged: calls
      .map((c) => ({
        _id: String(c._id),
        status: c.status,
        cost_paise: c.cost_paise ?? 0,
        duration_seconds: c.duration_seconds,
        charged: callItems.get(String(c._id)) ?? [],
      }))
      .filter(({ cost_paise, charged }) =>
        cost_paise ? !(charged.length === 1 && charged[0] === -cost_paise) : charged.some((amount) => amount !== 0) || charged.length > 1,
      ),
    /** Calls without exactly one `call.ended` event. */
    notEndedOnce: calls.filter((c) => endedCount.get(String(c._id)) !== 1),
    ledgerSum: items.reduce((sum, item) => sum + item.amount_paise, 0),
    balance: await balanceOf(workspaceId),
    deliveries: deliveries.length,
    undelivered: deliveries.filter((d) => d.status !== 'delivered'),
    /** Delivered deliveries whose event the receiver never got. */
    unreceived: deliveries.filter((d) => !receivedIds.has(d.event_id)),
    /** Events that have no delivery (every event goes to the `*` endpoint). */
    eventsWithoutDelivery: [...eventIds].filter((id) => !deliveredEvents.has(id)),
  };
}

/**
 * Slot handoffs of a workspace's finished calls against its limit: the k-th call to end frees
 * the slot the (limit + k)-th dial (`call.placed`) takes; each difference is one handoff.
 */
export async function slotHandoffs(workspaceId: string, limit: number): Promise<number[]> {
  const endTimes = (await Call.find({ workspace_id: workspaceId, ended_at: { $ne: null } }, { ended_at: 1 }).lean())
    .map((c) => c.ended_at!.getTime())
    .sort((a, b) => a - b);
  const dialTimes = (await CallEvent.find({ workspace_id: workspaceId, type: 'call.placed' }, { created_at: 1 }).lean())
    .map((e) => e.created_at.getTime())
    .sort((a, b) => a - b);
  return dialTimes
    .slice(limit)
    .map((dialAt, k) => dialAt - endTimes[k]!)
    .filter((ms) => Number.isFinite(ms));
}

/**
 * Mocha hooks of a cluster test file: a cluster of its own (files kill nodes) and a load
 * workspace with `limit`, both stopped after the file; on a failure, the tail of every
 * process's log. Read `stack` and `workspace` inside tests (set by the `before` hook).
 */
export function clusterForThisFile(limit: number): { readonly stack: ClusterStack; readonly workspace: LoadWorkspace } {
  const state: { stack?: ClusterStack; workspace?: LoadWorkspace } = {};
  before(async function () {
    this.timeout(5 * 60_000);
    state.stack = await startClusterStack();
    state.workspace = await loadWorkspace(state.stack, limit);
  });
  after(async () => {
    await state.workspace?.close();
    await state.stack?.stop();
  });
  afterEach(function () {
    if (this.currentTest?.state !== 'failed' || !state.stack) return;
    for (const file of state.stack.logFiles()) console.log(`--- ${file}\n${fs.readFileSync(file, 'utf8').slice(-4_000)}`);
  });
  return {
    get stack() {
      return state.stack!;
    },
    get workspace() {
      return state.workspace!;
    },
  };
}
