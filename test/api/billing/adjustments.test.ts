import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { AuditEvent } from '../../../db/models/audit-event';
import { newId } from '../../../db/ids';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner } from '../../support/accounts';
import { testServers } from '../../support/servers';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** Staff adjustments through `npm run credits:adjust`, seen through the API and the audit log. */
describe('billing: staff adjustments (npm run credits:adjust)', function () {
  this.timeout(120_000);
  let api: RunningApi;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());

  function adjustScript(args: string[]) {
    return promisify(execFile)('npm', ['run', '--silent', 'credits:adjust', '--', ...args], {
      cwd: ROOT,
      env: { ...process.env, MONGODB_URI: testServers().mongodbUri, BILLING_STAFF: 'ravi@support' },
      timeout: 60_000,
    });
  }
  const failed = (args: string[]) =>
    adjustScript(args).then(
      () => expect.fail('succeeded'),
      (err: { code: number; stderr: string }) => err,
    );

  it('writes a signed adjustment item with the note and staff name, audited, once per reference', async () => {
    const owner = await activeOwner(api);
    const headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
    const taken = await adjustScript([owner.workspaceId, '-2500', 'Refund', 'reversed:', 'duplicate', 'charge', '--ref', 'TICKET-42']);
    expect(taken.stdout).to.include(`adjusted workspace ${owner.workspaceId} by -2500 paise as ravi@support; balance 47500 paise`);
    const again = await adjustScript([owner.workspaceId, '-2500', 'Refund reversed', '--ref', 'TICKET-42']);
    expect(again.stdout).to.include('already adjusted');
    await adjustScript([owner.workspaceId, '+1000', 'Goodwill credit']);

    const ledger = await (await api.request('/api/v1/billing/ledger', { headers })).json();
    expect(ledger.total).to.equal(3);
    expect(ledger.items[0]).to.include({
      kind: 'adjustment',
      amount_paise: 1_000,
      balance_after_paise: 48_500,
      note: 'Goodwill credit',
      by_name: 'ravi@support',
    });
    expect(ledger.items[1]).to.include({ kind: 'adjustment', amount_paise: -2_500, balance_after_paise: 47_500, note: 'Refund reversed: duplicate charge' });
    const events = await AuditEvent.find({ workspace_id: owner.workspaceId, action: 'billing.credits_adjusted' }).sort({ at: 1 }).lean();
    expect(events).to.have.length(2);
    expect(events[0]!.actor).to.deep.include({ type: 'staff', name: 'ravi@support' });
    expect(events[0]!.details).to.deep.include({ amount_paise: -2_500, reference: 'TICKET-42', balance_after_paise: 47_500 });
    expect(events[0]!.target).to.include({ type: 'ledger_item', id: ledger.items[1].id });
  });

  it('explains a wrong command and changes nothing', async () => {
    const owner = await activeOwner(api);
    for (const [args, message] of [
      [[owner.workspaceId, '0', 'nothing'], 'is not an amount'],
      [[owner.workspaceId, '12.5', 'half'], 'is not an amount'],
      [['workspace-1', '100', 'note'], 'is not a workspace id'],
      [[owner.workspaceId, '100'], 'needs a note'],
      [[newId(), '100', 'to nobody'], 'no workspace'],
    ] as const) {
      const err = await failed([...args]);
      expect(err.code).to.equal(1);
      expect(err.stderr).to.include(message);
    }
    const ledger = await (await api.request('/api/v1/billing/ledger', { headers: { ...owner.auth, 'X-Workspace-ID': owner.workspaceId } })).json();
    expect(ledger.total).to.equal(1);
  });
});
