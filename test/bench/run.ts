import { agentsBench } from './agents.bench';
import { authBench } from './auth.bench';
import { renderDatesBench } from './render-dates.bench';

/**
 * `npm run bench`: each benchmark measures our code against a baseline in the same run and
 * prints the result next to its target, so noisy machines compare like with like.
 */
async function main(): Promise<void> {
  let failed = 0;
  const report = (ok: boolean, line: string, details: string[] = []) => {
    if (!ok) failed++;
    console.log(`${ok ? 'PASS' : 'FAIL'}  ${line}`);
    for (const detail of details) console.log(`      ${detail}`);
  };

  const { name, ratio, target } = renderDatesBench();
  report(ratio <= target, `${name}: ${ratio.toFixed(2)}x (target <= ${target}x)`);

  const auth = await authBench();
  report(auth.ok, auth.name, auth.lines);

  const agents = await agentsBench();
  report(agents.ok, agents.name, agents.lines);

  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
