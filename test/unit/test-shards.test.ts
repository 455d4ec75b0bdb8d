import { expect } from 'chai';
import { dealShards, summaryCounts } from '../../scripts/test-shards';

describe('npm test in shards (scripts/test-shards.ts)', () => {
  it('deals every file to exactly one shard, round-robin, and makes no empty shard', () => {
    const files = ['a', 'b', 'c', 'd', 'e'].map((name) => `test/${name}.test.ts`);
    const shards = dealShards(files, 2);
    expect(shards).to.deep.equal([
      ['test/a.test.ts', 'test/c.test.ts', 'test/e.test.ts'],
      ['test/b.test.ts', 'test/d.test.ts'],
    ]);
    expect(dealShards(files.slice(0, 1), 3)).to.deep.equal([['test/a.test.ts']]);
  });

  it("reads mocha's summary counts, the last summary of a report winning", () => {
    const report = ['  ✔ counts 12 passing things', '', '  1 passing (2s)', '', '  40 passing (3m)', '  2 pending', '  1 failing', '', '  1) a test:'].join(
      '\n',
    );
    expect(summaryCounts(report)).to.deep.equal({ passing: 40, failing: 1, pending: 2 });
    expect(summaryCounts('mocha could not start')).to.deep.equal({ passing: 0, failing: 0, pending: 0 });
  });
});
