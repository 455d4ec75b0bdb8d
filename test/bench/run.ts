import { renderDatesBench } from './render-dates.bench';

/**
 * `npm run bench`: each benchmark measures our code against a baseline in the same run and
 * prints the ratio next to its target, so noisy machines compare like with like.
 */
const benches = [renderDatesBench];
let failed = 0;
for (const bench of benches) {
  const { name, ratio, target } = bench();
  const ok = ratio <= target;
  if (!ok) failed++;
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${name}: ${ratio.toFixed(2)}x (target <= ${target}x)`);
}
process.exitCode = failed ? 1 : 0;
