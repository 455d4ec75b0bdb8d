import fs from 'node:fs';
import { expect } from 'chai';
import { startProcess } from '../../scripts/infra/processes';
import { NICENESS } from '../../scripts/infra/app-nodes';
import { BACKGROUND_NICENESS } from '../../scripts/infra/cpu-priority';

/** A thread's nice value, from /proc (the 19th field of its stat line). */
function niceOf(statFile: string): number {
  const stat = fs.readFileSync(statFile, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

describe('CPU priority of launched processes (docs/decisions/0245)', () => {
  it('starts a process with its niceness on every thread it makes, and one without at the launcher’s own', async () => {
    const own = niceOf('/proc/self/stat');
    const start = (niceness?: number) =>
      startProcess({
        name: 'sleeper',
        command: process.execPath,
        // Node makes its worker threads at start; the event loop then waits.
        args: ['-e', 'setTimeout(() => {}, 30_000)'],
        output: { file: '/dev/null' },
        niceness,
      });
    const background = start(BACKGROUND_NICENESS);
    const plain = start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const threadNices = (pid: number) => fs.readdirSync(`/proc/${pid}/task`).map((tid) => niceOf(`/proc/${pid}/task/${tid}/stat`));
      const backgroundThreads = threadNices(background.child.pid!);
      expect(backgroundThreads.length, 'threads of the background process').to.be.greaterThan(1);
      expect(new Set(backgroundThreads)).to.deep.equal(new Set([Math.min(19, own + BACKGROUND_NICENESS)]));
      expect(new Set(threadNices(plain.child.pid!))).to.deep.equal(new Set([own]));
    } finally {
      await Promise.all([background.stop(1_000), plain.stop(1_000)]);
    }
  });

  it('runs worker nodes below the API and media nodes, which carry the callee’s audio', () => {
    expect(NICENESS).to.deep.equal({ api: 0, media: 0, worker: BACKGROUND_NICENESS });
    expect(BACKGROUND_NICENESS).to.be.within(1, 19);
  });
});
