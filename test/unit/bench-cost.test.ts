import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { cpuSampler } from '../bench/cost';

/** The benchmarks' CPU accounting (test/bench/cost.ts): each process counts in its own role, once. */
describe('bench cost: CPU per role from /proc', function () {
  this.timeout(20_000);

  it("counts a busy child in its own role, not again in its parent's", async () => {
    const child = busyChild();
    await new Promise((resolve) => child.once('spawn', resolve));
    const sampler = cpuSampler({ parent: [process.pid], child: [child.pid as number] });
    await spun(child);
    const seconds = sampler.stop();
    child.kill();
    expect(seconds.child).to.be.within(0.5, 1.2);
    expect(seconds.parent).to.be.below(0.3);
  });

  it('counts a child that no role names in its parent', async () => {
    const child = busyChild();
    await new Promise((resolve) => child.once('spawn', resolve));
    const sampler = cpuSampler({ parent: [process.pid] });
    await spun(child);
    const seconds = sampler.stop();
    child.kill();
    expect(seconds.parent).to.be.above(0.5);
  });
});

/** A child that spins until it has used 600 ms of CPU, says so, and waits to be killed. */
function busyChild() {
  return spawn(process.execPath, [
    '-e',
    'for (let u = process.cpuUsage(); u.user + u.system < 600000; u = process.cpuUsage()); console.log("spun"); setTimeout(() => {}, 10000);',
  ]);
}

function spun(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve) => child.stdout?.once('data', () => resolve()));
}
