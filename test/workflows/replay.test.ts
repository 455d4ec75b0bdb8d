import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../support/servers';

/**
 * Replays recorded histories (test/fixtures/histories, made by test/support/record-histories.ts)
 * against today's workflow code: a change that breaks determinism fails here.
 */
describe('workflow replay of recorded histories', () => {
  const dir = path.join(__dirname, '..', 'fixtures', 'histories');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));

  it('has recorded histories to replay', () => expect(files).not.to.be.empty);

  for (const file of files) {
    it(`replays ${file} without nondeterminism`, async () => {
      const history = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
      const workflowId = path.basename(file, '.json');
      const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [{ workflowId, history }]);
      for await (const result of results) expect(result.error, String(result.error)).to.equal(undefined);
    });
  }
});
