import express from 'express';
import { startBenchStack } from './bench-stack';
import { countStoreOperations, cpuSampler, describeCost, timeStoreCommands } from './cost';

export interface AgentsBenchResult {
  name: string;
  ok: boolean;
  lines: string[];
}

const AGENTS = 200;
/** Requests in flight at once; PUTs go to as many different agents (one agent's saves are serial). */
const CONCURRENCY = 4;
const ROUNDS = 3;
const PER_ROUND = { list: 60, update: 200 };
const WARM_UP = 20;
/** Requests one at a time, to split each into the store's time and ours. */
const SEQUENTIAL = 40;
/** Issue 18: of a request's time, ours (everything but the store's commands) is at most this share. */
const TARGET_OURS_SHARE = 0.25;

/**
 * What the Agents endpoints cost next to a bare Express route answering the same JSON, on
 * the real app and a FerretDB of its own (no Temporal needed):
 * - `GET /agents` of a workspace with 200 agents (each with a prompt, tools and extractions);
 * - `PUT /agents/{id}`, which validates the body, claims and writes a version, updates the
 *   agent and drops the version that fell out of the newest 10.
 * The baseline is `express()` with `express.json()` and one route answering the response
 * body the real endpoint gave (the same bytes to serialise and send). Real requests carry an
 * API key, so authentication and the rate-limit count are included. Scenarios alternate in
 * rounds on the same machine; each reports requests per second (at 4 in flight) and p99.
 */
export async function agentsBench(): Promise<AgentsBenchResult> {
  const stack = await startBenchStack('scale', { timeStoreCommands: true });
  try {
    const { key } = stack;
    const real = `${await stack.listen(stack.app)}/api/v1`;
    const headers = { 'Content-Type': 'application/json', 'X-API-Key': key };

    const ids: string[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const res = await fetch(`${real}/agents`, { method: 'POST', headers, body: JSON.stringify(agentBody(i)) });
      if (res.status !== 201) throw new Error(`creating agent ${i} answered ${res.status}: ${await res.text()}`);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const updateBody = JSON.stringify(agentBody(0));
    const listAnswer = await (await fetch(`${real}/agents`, { headers })).json();
    const updateAnswer = await (await fetch(`${real}/agents/${ids[0]}`, { method: 'PUT', headers, body: updateBody })).json();

    const bare = express();
    bare.use(express.json({ limit: '1mb' }));
    bare.get('/agents', (_req, res) => {
      res.json(listAnswer);
    });
    bare.put('/agents/:id', (_req, res) => {
      res.json(updateAnswer);
    });
    const baseline = await stack.listen(bare);

    const scenarios = {
      'GET /agents (200 agents)': {
        ours: (worker: number) => request(`${real}/agents`, { headers }, 200, worker),
        bare: (worker: number) => request(`${baseline}/agents`, {}, 200, worker),
        count: PER_ROUND.list,
      },
      'PUT /agents/{id}': {
        ours: (worker: number) => request(`${real}/agents/${ids[worker]}`, { method: 'PUT', headers, body: updateBody }, 200, worker),
        bare: (worker: number) =>
          request(`${baseline}/agents/${ids[worker]}`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: updateBody }, 200, worker),
        count: PER_ROUND.update,
      },
    };

    const lines: string[] = [];
    let ok = true;
    for (const [name, scenario] of Object.entries(scenarios)) {
      await load(scenario.ours, WARM_UP);
      await load(scenario.bare, WARM_UP);
      const ours: Load[] = [];
      const bareRuns: Load[] = [];
      const cpu = cpuSampler(stack.roles);
      let oursCpu: Record<string, number> = {};
      const store = countStoreOperations();
      for (let round = 0; round < ROUNDS; round++) {
        bareRuns.push(await load(scenario.bare, scenario.count));
        cpu.restart();
        store.reset();
        ours.push(await load(scenario.ours, scenario.count));
        for (const [role, seconds] of Object.entries(cpu.stop())) oursCpu[role] = (oursCpu[role] ?? 0) + seconds;
      }
      const storeOperations = store.counts();
      store.stop();
      const o = summary(ours);
      const b = summary(bareRuns);
      lines.push(
        `${name}: ours ${o.rps.toFixed(0)} req/s, p99 ${o.p99.toFixed(1)} ms | bare Express ${b.rps.toFixed(0)} req/s, p99 ${b.p99.toFixed(1)} ms | ` +
          `throughput ${(o.rps / b.rps).toFixed(3)}x of bare, p99 ${(o.p99 / b.p99).toFixed(1)}x`,
      );
      // The store operations were counted in the last round only.
      lines.push(
        `  per request: ${describeCost({ units: ROUNDS * scenario.count, cpu: oursCpu, storeOperations: scaleCounts(storeOperations, ROUNDS) }, 'request')}`,
      );
      oursCpu = {};
      const split = await storeSplit(scenario.ours, SEQUENTIAL);
      const oursShare = split.oursMs / split.requestMs;
      if (name.startsWith('GET')) ok &&= oursShare <= TARGET_OURS_SHARE;
      lines.push(
        `  ${name.startsWith('GET') ? (oursShare <= TARGET_OURS_SHARE ? 'MET ' : 'MISS') : 'info'} one at a time (${SEQUENTIAL}): ${split.requestMs.toFixed(1)} ms a request = the store's commands ${split.storeMs.toFixed(1)} ms (${pct(1 - oursShare)}) + ours ${split.oursMs.toFixed(1)} ms (${pct(oursShare)})` +
          `${name.startsWith('GET') ? ` (target: ours <= ${pct(TARGET_OURS_SHARE)})` : ''}`,
      );
    }
    return { name: `Agents endpoints against a bare Express route (${CONCURRENCY} in flight, FerretDB)`, ok, lines };
  } finally {
    await stack.stop();
  }
}

/** A realistic agent: a prompt with variables, two tools (one with a JSON Schema using `$ref`), three extractions. */
function agentBody(i: number) {
  return {
    name: `Collections agent ${i}`,
    welcome_message: 'Namaste {customer_name}, main {company} se baat kar rahi hoon.',
    system_prompt: `You remind {customer_name} about the EMI of {amount} due on {due_date}. `.repeat(20),
    llm: { provider: 'openai', model: 'gpt-4o-mini', temperature: 0.3 },
    call: { max_duration_seconds: 900, call_start_hour: 10, call_end_hour: 19 },
    analytics: {
      summarize: true,
      extractions: [
        { key: 'promise_to_pay', type: 'boolean', description: 'Did the customer promise to pay?' },
        { key: 'promise_date', type: 'date' },
        { key: 'reason', type: 'choice', choices: [{ value: 'lost_job' }, { value: 'forgot' }, { value: 'dispute' }] },
      ],
    },
    tools: [
      {
        name: 'payment_link',
        description: 'Send the customer a payment link by SMS',
        url: 'https://api.example.com/payment-links',
        parameters: {
          type: 'object',
          properties: { amount: { $ref: '#/$defs/paise' } },
          required: ['amount'],
          $defs: { paise: { type: 'integer', minimum: 1 } },
        },
        headers: { Authorization: 'Bearer example' },
      },
      { name: 'loan_status', description: 'Look up the loan status', method: 'GET', url: 'https://api.example.com/loans', timeout_seconds: 4 },
    ],
  };
}

async function request(url: string, init: RequestInit, status: number, worker: number): Promise<void> {
  const res = await fetch(url, init);
  await res.arrayBuffer();
  if (res.status !== status) throw new Error(`worker ${worker}: ${init.method ?? 'GET'} ${url} answered ${res.status}, expected ${status}`);
}

const pct = (share: number) => `${Math.round(share * 100)}%`;

function scaleCounts(counts: Record<string, number>, factor: number): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([op, n]) => [op, n * factor]));
}

/**
 * Requests one at a time: each one's time, and how much of it the store's commands took (the
 * driver's durations, from sending a command to its answer); the rest is ours (HTTP, the
 * middleware, decoding, rendering, serialising). Means over `count` requests.
 */
async function storeSplit(send: (worker: number) => Promise<void>, count: number): Promise<{ requestMs: number; storeMs: number; oursMs: number }> {
  const timer = timeStoreCommands();
  let requestMs = 0;
  try {
    for (let i = 0; i < count; i++) {
      const t = process.hrtime.bigint();
      await send(0);
      requestMs += Number(process.hrtime.bigint() - t) / 1e6;
    }
    const storeMs = timer.totalMs();
    return { requestMs: requestMs / count, storeMs: storeMs / count, oursMs: (requestMs - storeMs) / count };
  } finally {
    timer.stop();
  }
}

interface Load {
  latencies: number[];
  elapsedMs: number;
}

/** `count` requests, CONCURRENCY at a time (worker `w` always uses its own agent). */
async function load(send: (worker: number) => Promise<void>, count: number): Promise<Load> {
  const latencies: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (next < count) {
        next++;
        const t = process.hrtime.bigint();
        await send(worker);
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  return { latencies, elapsedMs: Number(process.hrtime.bigint() - started) / 1e6 };
}

function summary(runs: Load[]): { rps: number; p99: number } {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const elapsed = runs.reduce((sum, r) => sum + r.elapsedMs, 0);
  return { rps: (latencies.length / elapsed) * 1000, p99: latencies[Math.min(latencies.length - 1, Math.floor(0.99 * latencies.length))] };
}
