import { agentsBench } from './agents.bench';
import { authBench } from './auth.bench';
import { renderDatesBench } from './render-dates.bench';
import { webhooksBench } from './webhooks.bench';
import { callsBench } from './calls.bench';
import { clusterBench } from './cluster.bench';
import { answerPathBench } from './answer-path.bench';
import { callerLatencyBench } from './caller-latency.bench';

/**
 * `npm run bench`: each benchmark measures our code against a baseline in the same run and
 * prints the result next to its target, so noisy machines compare like with like.
 * `npm run bench -- <name>` runs one of them (`npm run bench:webhooks` is `webhooks`).
 */
const BENCHES = ['render-dates', 'auth', 'agents', 'webhooks', 'calls', 'answer-path', 'caller-latency', 'cluster'] as const;
/** Run only when named (`npm run bench:cluster`): minutes long, and it needs the cluster tools. */
const ON_REQUEST: readonly string[] = ['cluster'];

async function main(): Promise<void> {
  const only = process.argv[2];
  if (only && !(BENCHES as readonly string[]).includes(only)) throw new Error(`unknown benchmark "${only}"; known: ${BENCHES.join(', ')}`);
  const wanted = (bench: (typeof BENCHES)[number]) => (!only && !ON_REQUEST.includes(bench)) || only === bench;
  let failed = 0;
  const report = (ok: boolean, line: string, details: string[] = []) => {
    if (!ok) failed++;
    console.log(`${ok ? 'PASS' : 'FAIL'}  ${line}`);
    for (const detail of details) console.log(`      ${detail}`);
  };

  if (wanted('render-dates')) {
    const { name, ratio, target } = renderDatesBench();
    report(ratio <= target, `${name}: ${ratio.toFixed(2)}x (target <= ${target}x)`);
  }

  if (wanted('auth')) {
    const auth = await authBench();
    report(auth.ok, auth.name, auth.lines);
  }

  if (wanted('agents')) {
    const agents = await agentsBench();
    report(agents.ok, agents.name, agents.lines);
  }

  if (wanted('webhooks')) {
    const webhooks = await webhooksBench();
    report(webhooks.ok, webhooks.name, webhooks.lines);
  }

  if (wanted('calls')) {
    const calls = await callsBench();
    report(calls.ok, calls.name, calls.lines);
  }

  if (wanted('answer-path')) {
    const answer = await answerPathBench();
    report(answer.ok, answer.name, answer.lines);
  }

  if (wanted('caller-latency')) {
    const callerLatency = await callerLatencyBench();
    report(callerLatency.ok, callerLatency.name, callerLatency.lines);
  }

  if (wanted('cluster')) {
    const cluster = await clusterBench();
    report(cluster.ok, cluster.name, cluster.lines);
  }

  process.exitCode = failed ? 1 : 0;
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  // Whatever a benchmark's servers or clients left open, the run ends with its report.
  .finally(() => process.exit());
