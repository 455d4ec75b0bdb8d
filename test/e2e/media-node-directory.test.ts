import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { chooseMediaNode, registerMediaNode } from '../../domain/calls/media-nodes';

/**
 * The media node directory as an API node reads it (docs/decisions/0234), on the test FerretDB:
 * chosen from the last read, a node leaving is forgotten at once by this process, and it waits
 * before it stops taking calls, while API nodes elsewhere may still choose it.
 */
describe('media node directory, as the answer reads it', () => {
  const node = () => {
    const id = `directory-test-${randomBytes(6).toString('hex')}`;
    return { id, url: `ws://${id}.invalid`, taskQueue: `media-node-${id}` };
  };

  it('forgets a node at once when it leaves in this process, and finds one started since', async () => {
    const a = node();
    const b = node();
    const entryA = await registerMediaNode(a, () => 0, undefined, 0);
    expect((await chooseMediaNode())?.url).to.be.a('string');
    const entryB = await registerMediaNode(b, () => 0, undefined, 0);
    await entryA.stop();
    const chosen = new Set<string>();
    // Enough choices that a node of another test still running is no reason to miss B.
    for (let i = 0; i < 200; i += 1) chosen.add((await chooseMediaNode())!.url);
    expect(chosen.has(a.url), 'the node that left').to.equal(false);
    expect(chosen.has(b.url), 'the node started since').to.equal(true);
    await entryB.stop();
  });

  it('a node leaving goes on taking calls for the wait it is given before its stop returns', async () => {
    const entry = await registerMediaNode(node(), () => 0, undefined, 300);
    const started = performance.now();
    await entry.stop();
    expect(performance.now() - started).to.be.at.least(300);
  });
});
