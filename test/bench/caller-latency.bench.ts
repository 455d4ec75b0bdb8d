import fs from 'node:fs';
import path from 'node:path';
import { randomInt } from 'node:crypto';
import { Call } from '../../db/models/call';
import { CallEvent } from '../../db/models/call-event';
import { nearestRank } from '../support/caller-latency';
import { createAgent, OPEN_HOURS, postJson, startCallsBenchStack, type CallsBenchStack } from './calls-stack';
import { RESULTS_DIR } from './charts';
import type { CallerStep } from '../../simulators/telephony/simulated-caller';

/**
 * `npm run bench -- caller-latency` (issue 32): what a caller hears, measured by the simulated
 * callee on its side of the audio stream, with the simulators set to the providers' published
 * figures for the default catalog (PUBLISHED; sources in docs/benchmarks.md) and a telephony
 * leg each way. Voice-to-voice per turn and the greeting, p50/p90/p99 at 1, 20 and 50
 * concurrent calls, with each stage's share (from the turns' `tts.first_audio` breakdown on the
 * media node; the telephony legs are the simulator's). Then the greeting with the welcome
 * prepared and without, in the same run: two media nodes, one with PREPARED_GREETINGS off,
 * calls shared between them at random. Writes docs/benchmarks/caller-latency.svg
 * (`BENCH_CHARTS_DIR`, as the other charts) and bench-results/caller-latency.md.
 */
export const PUBLISHED = {
  /** Deepgram Flux (flux-general-multi): its published end-of-turn latency. */
  endOfTurnMs: 260,
  /** Flux's eager end of turn (`eager_eot_threshold` 0.3 to 0.5): about 150 to 250 ms sooner (Telnyx's Flux parameters page); the middle. */
  eagerSavingMs: 200,
  /** The recognizer's message back to us beyond that (network), our assumption. */
  recogniserMs: 30,
  /** OpenAI gpt-4o-mini: time to first token, and its output speed (about 80 tokens a second). */
  llmFirstTokenMs: 400,
  tokenIntervalMs: 12,
  /** OpenAI gpt-4o-mini-tts: time to first byte. */
  ttsFirstByteMs: 300,
  /** Telephony leg, one way (Plivo publishes none; within ITU-T G.114's 150 ms). */
  legMs: 80,
};

/** Targets of the issue: at 20 calls, and within 10% of those at 50. */
const TARGET_P50_MS = 600;
const TARGET_P90_MS = 800;
const GREETING_TARGET_P95_MS = 150;
const TURN_SPREAD_MS = 3_000;
/**
 * How long the greeting's callees let the phone ring before answering: 2 s, under one ring
 * cycle of India's cadence (0.4 s on, 0.2 s off, 0.4 s on, 2 s off); the turns' callees answer
 * after 0.2 s. A welcome with the callee's values is synthesized while it rings (0228).
 */
const GREETING_RING_SECONDS = 2;
const REPLY = 'Sure, let me check. Your order left the warehouse this morning and should reach you by tomorrow evening.';
/**
 * What each caller says: three lines, the second with a pause in it longer than Flux's early
 * end and shorter than its end of turn (a hesitation: the early end comes, then TurnResumed).
 */
const LINES: CallerStep[] = [
  { say: 'What is the status of my order?', afterAgentSilenceMs: 300 },
  { say: 'And when will it', afterAgentSilenceMs: 300 },
  { pauseMs: 150 },
  { say: 'arrive here?', unprompted: true },
  { say: 'Okay, thank you.', afterAgentSilenceMs: 300 },
];
/** How the agent answers: after the end of turn, or speculatively from the early end (docs/decisions/0227). */
const MODES = ['after the end of turn', 'speculative'] as const;
type Mode = (typeof MODES)[number];
const STAGES = ['telephony', 'end of turn', 'recogniser', 'model', 'speech', 'ours'] as const;
type Stage = (typeof STAGES)[number];

export interface CallerLatencyBenchResult {
  name: string;
  ok: boolean;
  lines: string[];
}

interface Row {
  mode: Mode;
  calls: number;
  /** Streamed model requests beyond the turns answered: the speculative replies dropped. */
  droppedRequests: number;
  voiceToVoice: number[];
  greeting: number[];
  /** Per stage, the mean over the turns (ms). */
  stages: Record<Stage, number>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const callee = () => `+9195${String(randomInt(0, 100_000_000)).padStart(8, '0')}`;
const fmt = (ms: number) => (Number.isFinite(ms) ? `${Math.round(ms)}` : '-');

export async function callerLatencyBench(): Promise<CallerLatencyBenchResult> {
  const lines: string[] = [];
  const stack = await startCallsBenchStack({ concurrencyLimit: 60 });
  let ok = true;
  try {
    await stack.simulators.configure({
      fluxEndOfTurnMs: PUBLISHED.endOfTurnMs,
      fluxEagerEndOfTurnMs: PUBLISHED.endOfTurnMs - PUBLISHED.eagerSavingMs,
      sttLatencyMs: PUBLISHED.recogniserMs,
      llmLatencyMs: PUBLISHED.llmFirstTokenMs,
      tokenIntervalMs: PUBLISHED.tokenIntervalMs,
      ttsLatencyMs: PUBLISHED.ttsFirstByteMs,
      legDelayMs: PUBLISHED.legMs,
      replyText: REPLY,
    });
    // The default catalog's agent (Flux, gpt-4o-mini, gpt-4o-mini-tts), with a welcome the same for every call; and the same agent with speculative replies.
    const agents = {} as Record<Mode, string>;
    for (const mode of MODES)
      agents[mode] = await createAgent(stack, {
        welcome_message: 'Hello, this is Asha from Acme. How can I help?',
        transcriber: { speculative_replies: mode === 'speculative' },
        call: { ...OPEN_HOURS, allow_interruptions: false },
      });
    for (const mode of MODES) await runCalls(stack, agents[mode], 1); // warm-up: code compiled, connections opened, the welcome cached
    const rows: Row[] = [];
    // CALLER_LATENCY_ONLY=greeting: the greeting's comparison alone (after a change to the welcome's path).
    const onlyGreeting = process.env.CALLER_LATENCY_ONLY === 'greeting';
    for (const [concurrent, rounds] of onlyGreeting
      ? []
      : ([
          [1, 4],
          [20, 1],
          [50, 1],
        ] as const)) {
      // Both modes at each concurrency, one after the other in the same run.
      for (const mode of MODES) {
        const runs = [];
        for (let round = 0; round < rounds; round++) runs.push(await runCalls(stack, agents[mode], concurrent));
        rows.push(summarize(mode, concurrent, runs));
      }
    }
    for (const row of rows) {
      lines.push(
        `${row.mode}, ${row.calls} call(s): voice-to-voice p50 ${fmt(nearestRank(row.voiceToVoice, 50))} / p90 ${fmt(nearestRank(row.voiceToVoice, 90))} / p99 ${fmt(nearestRank(row.voiceToVoice, 99))} ms (${row.voiceToVoice.length} turns); greeting from the answer p50 ${fmt(nearestRank(row.greeting, 50))} / p90 ${fmt(nearestRank(row.greeting, 90))} / p99 ${fmt(nearestRank(row.greeting, 99))} ms`,
        `  stages (mean ms): ${STAGES.map((s) => `${s} ${fmt(row.stages[s])}`).join(', ')}; model requests dropped: ${row.droppedRequests} (${row.voiceToVoice.length} turns answered)`,
      );
    }
    for (const calls of onlyGreeting ? [] : [1, 20, 50]) {
      const [plain, early] = MODES.map((mode) => rows.find((r) => r.mode === mode && r.calls === calls)!);
      lines.push(
        `speculative replies at ${calls} call(s): p50 ${fmt(nearestRank(plain!.voiceToVoice, 50) - nearestRank(early!.voiceToVoice, 50))} ms sooner, p90 ${fmt(nearestRank(plain!.voiceToVoice, 90) - nearestRank(early!.voiceToVoice, 90))} ms sooner; ${early!.droppedRequests} model requests dropped for ${early!.voiceToVoice.length} turns`,
      );
    }
    const at20 = rows.find((r) => r.mode === 'speculative' && r.calls === 20)!;
    const at50 = rows.find((r) => r.mode === 'speculative' && r.calls === 50)!;
    const verdict = (row: Row, p50: number, p90: number) => nearestRank(row.voiceToVoice, 50) < p50 && nearestRank(row.voiceToVoice, 90) < p90;
    const holder = (row: Row) => STAGES.reduce((a, b) => (row.stages[a] >= row.stages[b] ? a : b));
    for (const [row, p50, p90] of onlyGreeting
      ? []
      : ([
          [at20, TARGET_P50_MS, TARGET_P90_MS],
          [at50, Math.round(TARGET_P50_MS * 1.1), Math.round(TARGET_P90_MS * 1.1)],
        ] as const)) {
      const met = verdict(row, p50, p90);
      lines.push(
        `target at ${row.calls} calls (speculative replies): p50 < ${p50} ms and p90 < ${p90} ms: ${met ? 'met' : `NOT met; the largest stage is ${holder(row)} (${fmt(row.stages[holder(row)])} ms)`}`,
      );
    }

    const greeting = await greetingBeforeAfter(stack);
    lines.push(...greeting.lines);
    if (!greeting.ok) ok = false;
    if (onlyGreeting) lines.push(...greeting.table);
    else {
      lines.push(writeReport(rows, greeting.table));
      lines.push(await writeChart(rows));
    }
  } finally {
    await stack.stop();
  }
  return { name: 'caller latency: voice-to-voice and greeting as the callee hears them', ok, lines };
}

/** `concurrent` calls live together, each caller saying LINES (the k-th starting k * TURN_SPREAD_MS / n in); what each heard, and its turns' stages. */
async function runCalls(stack: CallsBenchStack, agentId: string, concurrent: number, userData?: (k: number) => Record<string, unknown>, ringSeconds = 0.2) {
  const numbers = Array.from({ length: concurrent }, callee);
  await Promise.all(
    numbers.map((number, k) =>
      stack.simulators.setCallees([number], {
        kind: 'answer',
        answerAfterSeconds: ringSeconds,
        conversation: [{ pauseMs: Math.round((k * TURN_SPREAD_MS) / concurrent) }, ...LINES, { hangUp: true, afterAgentSilenceMs: 300 }],
      }),
    ),
  );
  const requestsBefore = await stack.simulators.modelRequests();
  const ids = await Promise.all(
    numbers.map(
      async (to, k) =>
        (await postJson(stack, '/calls', { agent_id: agentId, to_number: to, from_number: stack.fromNumber, ...(userData ? { user_data: userData(k) } : {}) }))
          .json.id as string,
    ),
  );
  const deadline = Date.now() + 5 * 60_000;
  while (Date.now() < deadline && (await CallEvent.countDocuments({ call_id: { $in: ids }, type: 'call.ended' })) < ids.length) await sleep(1_000);
  const heard = await stack.simulators.latencies(numbers);
  const breakdowns = (await CallEvent.find({ call_id: { $in: ids }, type: 'tts.first_audio' }, { data_json: 1 }).lean())
    .map((e) => JSON.parse(e.data_json) as Record<string, number | null>)
    .filter((d) => typeof d.voice_to_voice_ms === 'number');
  const nodes = new Map((await Call.find({ _id: { $in: ids } }, { media_node_url: 1 }).lean()).map((c) => [c._id as string, c.media_node_url ?? null]));
  const turnsAnswered = await CallEvent.countDocuments({ call_id: { $in: ids }, type: 'agent.reply' });
  const droppedRequests = (await stack.simulators.modelRequests()) - requestsBefore - turnsAnswered;
  return { heard, breakdowns, nodeOf: ids.map((id) => nodes.get(id) ?? null), droppedRequests };
}

function summarize(mode: Mode, calls: number, runs: Awaited<ReturnType<typeof runCalls>>[]): Row {
  const voiceToVoice = runs.flatMap((r) => r.heard.flatMap((h) => h?.voiceToVoiceMs ?? []));
  const greeting = runs.flatMap((r) => r.heard.flatMap((h) => (h?.greetingMs === null || h === null ? [] : [h.greetingMs])));
  const breakdowns = runs.flatMap((r) => r.breakdowns);
  const mean = (key: string) => breakdowns.reduce((sum, d) => sum + (d[key] ?? 0), 0) / (breakdowns.length || NaN);
  const stages: Record<Stage, number> = {
    telephony: 2 * PUBLISHED.legMs,
    'end of turn': mean('end_of_turn_ms'),
    recogniser: mean('recogniser_ms'),
    model: mean('model_first_token_ms') + mean('model_first_sentence_ms'),
    speech: mean('speech_first_byte_ms'),
    ours: 0,
  };
  // Ours: what the callee waited beyond the stages (our node's own share, and the callee's playback frame).
  const heardMean = voiceToVoice.reduce((a, b) => a + b, 0) / (voiceToVoice.length || NaN);
  stages.ours = Math.max(0, heardMean - STAGES.filter((s) => s !== 'ours').reduce((sum, s) => sum + stages[s], 0));
  return { mode, calls, voiceToVoice, greeting, stages, droppedRequests: runs.reduce((sum, r) => sum + r.droppedRequests, 0) };
}

/**
 * The greeting with the welcome prepared (and cached) and without: two media nodes, the
 * second with PREPARED_GREETINGS off, 20 calls at once shared between them at random, for a
 * welcome the same for every call and for one with the callee's name. Measured by the callee:
 * from its answer, and from its stream opening less both legs (after the stream opens on our side).
 */
async function greetingBeforeAfter(stack: CallsBenchStack): Promise<{ ok: boolean; lines: string[]; table: string[] }> {
  // The first node (welcomes prepared) took every call so far; the one started now prepares none.
  const preparing = new Set((await Call.distinct('media_node_url')).filter(Boolean) as string[]);
  const off = await stack.startMedia({ PREPARED_GREETINGS: 'false' });
  const lines: string[] = [];
  const table: string[] = [];
  let ok = true;
  try {
    for (const [label, welcome, userData] of [
      ['the same welcome for every call', 'Hello, this is Asha from Acme. How can I help?', undefined],
      ["a welcome with the callee's name", 'Hello {name}, this is Asha from Acme.', (k: number) => ({ name: `Caller ${k}` })],
    ] as const) {
      const agentId = await createAgent(stack, { welcome_message: welcome, call: OPEN_HOURS });
      const on: { fromAnswer: number[]; afterStream: number[] } = { fromAnswer: [], afterStream: [] };
      const without: typeof on = { fromAnswer: [], afterStream: [] };
      for (let round = 0; round < 3; round++) {
        const run = await runCalls(stack, agentId, 20, userData, GREETING_RING_SECONDS);
        run.heard.forEach((h, i) => {
          if (!h || h.greetingMs === null || !h.silence?.toStreamMs) return;
          const side = preparing.has(run.nodeOf[i] ?? '') ? on : without;
          side.fromAnswer.push(h.greetingMs);
          side.afterStream.push(h.greetingMs - h.silence.toStreamMs - 2 * PUBLISHED.legMs);
        });
      }
      const describe = (side: typeof on) =>
        `from the answer p50 ${fmt(nearestRank(side.fromAnswer, 50))} / p95 ${fmt(nearestRank(side.fromAnswer, 95))} ms; after the stream opens on our side p50 ${fmt(nearestRank(side.afterStream, 50))} / p95 ${fmt(nearestRank(side.afterStream, 95))} ms (${side.fromAnswer.length} calls)`;
      lines.push(`greeting, ${label}: prepared ${describe(on)}`, `greeting, ${label}: not prepared ${describe(without)}`);
      table.push(
        `| ${label} | prepared | ${fmt(nearestRank(on.fromAnswer, 50))} | ${fmt(nearestRank(on.fromAnswer, 95))} | ${fmt(nearestRank(on.afterStream, 50))} | ${fmt(nearestRank(on.afterStream, 95))} | ${on.fromAnswer.length} |`,
        `| ${label} | not prepared | ${fmt(nearestRank(without.fromAnswer, 50))} | ${fmt(nearestRank(without.fromAnswer, 95))} | ${fmt(nearestRank(without.afterStream, 50))} | ${fmt(nearestRank(without.afterStream, 95))} | ${without.fromAnswer.length} |`,
      );
      if (label.startsWith('the same')) {
        const p95 = nearestRank(on.afterStream, 95);
        lines.push(
          `target: greeting p95 after the stream opens on our side < ${GREETING_TARGET_P95_MS} ms (same welcome, prepared): ${p95 < GREETING_TARGET_P95_MS ? 'met' : 'NOT met'}`,
        );
        if (!(p95 < GREETING_TARGET_P95_MS)) ok = false;
      }
    }
  } finally {
    await off.stop();
  }
  return { ok, lines, table };
}

/** The run's table in Markdown, for docs/benchmarks.md (bench-results/caller-latency.md). */
function writeReport(rows: Row[], greetingTable: string[]): string {
  const share = (row: Row, stage: Stage) => {
    const total = STAGES.reduce((sum, s) => sum + row.stages[s], 0);
    return `${fmt(row.stages[stage])} (${Math.round((100 * row.stages[stage]) / total)}%)`;
  };
  const text = [
    '| replies | calls | turns | voice-to-voice p50 / p90 / p99 (ms) | greeting from the answer p50 / p90 / p99 (ms) | ' +
      STAGES.join(' | ') +
      ' | model requests dropped |',
    '|---|---|---|---|---|' + STAGES.map(() => '---').join('|') + '|---|',
    ...rows.map(
      (r) =>
        `| ${r.mode} | ${r.calls} | ${r.voiceToVoice.length} | ${[50, 90, 99].map((p) => fmt(nearestRank(r.voiceToVoice, p))).join(' / ')} | ${[50, 90, 99]
          .map((p) => fmt(nearestRank(r.greeting, p)))
          .join(' / ')} | ${STAGES.map((s) => share(r, s)).join(' | ')} | ${r.droppedRequests} |`,
    ),
    '',
    '| welcome | node | from the answer p50 (ms) | p95 | after our stream opens p50 (ms) | p95 | calls |',
    '|---|---|---|---|---|---|---|',
    ...greetingTable,
    '',
  ].join('\n');
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, 'caller-latency.md');
  fs.writeFileSync(file, text);
  return `table: ${path.relative(process.cwd(), file)}\n${text}`;
}

/** Stacked bars: each concurrency's mean voice-to-voice split into its stages, with the p50 and p90 marked. */
async function writeChart(rows: Row[]): Promise<string> {
  const colors: Record<Stage, string> = {
    telephony: '#9e9e9e',
    'end of turn': '#5c6bc0',
    recogniser: '#26a69a',
    model: '#ef6c00',
    speech: '#ab47bc',
    ours: '#d32f2f',
  };
  const width = 800;
  const left = 190;
  const right = 40;
  const top = 60;
  const barHeight = 56;
  const gap = 34;
  const height = top + rows.length * (barHeight + gap) + 50;
  const max = Math.max(...rows.map((r) => nearestRank(r.voiceToVoice, 99)).filter(Number.isFinite), 1000);
  const scale = (ms: number) => ((width - left - right) * ms) / max;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="15">Voice-to-voice as the caller hears it (ms), by stage; | p50, ¦ p90</text>`,
  ];
  rows.forEach((row, i) => {
    const y = top + i * (barHeight + gap);
    let x = left;
    parts.push(`<text x="${left - 10}" y="${y + barHeight / 2 - 4}" text-anchor="end">${row.calls} call${row.calls > 1 ? 's' : ''}</text>`);
    parts.push(`<text x="${left - 10}" y="${y + barHeight / 2 + 12}" text-anchor="end">${row.mode}</text>`);
    for (const stage of STAGES) {
      const w = scale(row.stages[stage]);
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y}" width="${Math.max(0, w).toFixed(1)}" height="${barHeight}" fill="${colors[stage]}"><title>${stage}: ${fmt(row.stages[stage])} ms</title></rect>`,
      );
      x += Math.max(0, w);
    }
    for (const [p, dash] of [
      [50, ''],
      [90, ' stroke-dasharray="4 3"'],
    ] as const) {
      const v = nearestRank(row.voiceToVoice, p);
      if (!Number.isFinite(v)) continue;
      const px = left + scale(v);
      parts.push(`<line x1="${px.toFixed(1)}" y1="${y - 6}" x2="${px.toFixed(1)}" y2="${y + barHeight + 6}" stroke="#000" stroke-width="2"${dash}/>`);
      parts.push(`<text x="${px.toFixed(1)}" y="${y + barHeight + 18}" text-anchor="middle">p${p} ${fmt(v)}</text>`);
    }
  });
  const legendY = height - 24;
  STAGES.forEach((stage, i) => {
    const x = left + i * 100;
    parts.push(`<rect x="${x}" y="${legendY - 10}" width="12" height="12" fill="${colors[stage]}"/><text x="${x + 16}" y="${legendY}">${stage}</text>`);
  });
  parts.push('</svg>');
  const svg = parts.join('\n');
  const written: string[] = [];
  for (const dir of [RESULTS_DIR, path.resolve(process.env.BENCH_CHARTS_DIR ?? path.join(__dirname, '..', '..', 'docs', 'benchmarks'))]) {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'caller-latency.svg');
    fs.writeFileSync(file, svg);
    written.push(path.relative(process.cwd(), file));
  }
  return `chart: ${written.join(', ')}`;
}
