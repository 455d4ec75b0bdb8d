import { expect } from 'chai';
import { adjustCredits } from '../../../domain/billing/adjustments';
import { Workspace } from '../../../db/models/workspace';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, signUp } from '../../support/accounts';

type Headers = Record<string, string>;

/**
 * GET /billing, /billing/ledger, /billing/plan and /billing/packs over HTTP on the real
 * database: the balance summary and its low-balance boundary, the ledger's pages and bounds,
 * the plan and the packs, and who may read them.
 */
describe('billing: balance, ledger, plan and packs', () => {
  let api: RunningApi;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());

  async function owner(): Promise<{ workspaceId: string; headers: Headers }> {
    const signedUp = await activeOwner(api);
    return { workspaceId: signedUp.workspaceId, headers: { ...signedUp.auth, 'X-Workspace-ID': signedUp.workspaceId } };
  }
  const get = async (path: string, headers: Headers, status = 200) => {
    const res = await api.request(`/api/v1${path}`, { headers });
    expect(res.status, await res.clone().text()).to.equal(status);
    return res.json();
  };
  const adjust = (workspaceId: string, amountPaise: number, note = 'test adjustment') =>
    adjustCredits({ workspaceId, amountPaise, note, by: 'ops', at: new Date() });

  it('summarises the welcome credits at the plan price, and turns low below 10 minutes', async () => {
    const { workspaceId, headers } = await owner();
    expect(await get('/billing', headers)).to.deep.equal({
      credits_paise: 50_000,
      price_per_minute_paise: 400,
      minutes_left: 125,
      low_balance: false,
      plan_name: 'Starter',
    });
    await adjust(workspaceId, 4_000 - 50_000);
    expect(await get('/billing', headers)).to.include({ credits_paise: 4_000, minutes_left: 10, low_balance: false });
    await adjust(workspaceId, -1);
    expect(await get('/billing', headers)).to.include({ credits_paise: 3_999, minutes_left: 9.99, low_balance: true });
    await Workspace.updateOne({ _id: workspaceId }, { $set: { plan: 'scale' } });
    // The same balance is over 13 minutes at Scale's 300 paise.
    expect(await get('/billing', headers)).to.include({ price_per_minute_paise: 300, minutes_left: 13.33, low_balance: false, plan_name: 'Scale' });
    await adjust(workspaceId, -5_000);
    expect(await get('/billing', headers)).to.include({ credits_paise: -1_001, minutes_left: 0, low_balance: true });
  });

  it('lists the ledger newest first in pages, each balance following from the one before', async () => {
    const { workspaceId, headers } = await owner();
    for (let i = 1; i <= 6; i++) await adjust(workspaceId, i % 2 ? -i * 100 : i * 100, `change ${i}`);
    const all = await get('/billing/ledger', headers);
    expect(all.total).to.equal(7);
    expect(all.items.map((i: { note: string }) => i.note)).to.deep.equal([
      'change 6',
      'change 5',
      'change 4',
      'change 3',
      'change 2',
      'change 1',
      all.items[6].note,
    ]);
    const grant = all.items[6];
    expect(grant).to.include({ kind: 'grant', amount_paise: 50_000, balance_after_paise: 50_000, call_id: null, payment_id: null });
    expect(Object.keys(grant).sort()).to.deep.equal(['amount_paise', 'at', 'balance_after_paise', 'by_name', 'call_id', 'id', 'kind', 'note', 'payment_id']);
    expect(grant.at).to.match(/\+05:30$/);
    for (let i = 0; i < 6; i++) expect(all.items[i].balance_after_paise).to.equal(all.items[i + 1].balance_after_paise + all.items[i].amount_paise);
    expect(all.items[0]).to.include({ kind: 'adjustment', amount_paise: 600, by_name: 'ops' });

    const page = await get('/billing/ledger?limit=2&skip=3', headers);
    expect(page.total).to.equal(7);
    expect(page.items.map((i: { id: string }) => i.id)).to.deep.equal(all.items.slice(3, 5).map((i: { id: string }) => i.id));
    expect((await get('/billing/ledger?skip=6', headers)).items).to.have.length(1);
    expect(await get('/billing/ledger?skip=7', headers)).to.deep.equal({ items: [], total: 7 });
    expect((await get('/billing/ledger?limit=200', headers)).items).to.have.length(7);
  });

  it('answers 422 for a limit of 0 or 201 and a negative skip, at the parameter', async () => {
    const { headers } = await owner();
    const bad = async (query: string, loc: string[], type: string) => {
      const body = await get(`/billing/ledger?${query}`, headers, 422);
      expect(body.detail).to.have.length(1);
      expect(body.detail[0]).to.include({ type });
      expect(body.detail[0].loc).to.deep.equal(loc);
    };
    await bad('limit=0', ['query', 'limit'], 'greater_than_equal');
    await bad('limit=201', ['query', 'limit'], 'less_than_equal');
    await bad('skip=-1', ['query', 'skip'], 'greater_than_equal');
  });

  it("shows the workspace's plan with its limits, and the limit in force", async () => {
    const { workspaceId, headers } = await owner();
    expect(await get('/billing/plan', headers)).to.deep.equal({
      id: 'starter',
      name: 'Starter',
      concurrent_calls: 5,
      price_per_minute_paise: 400,
      max_agents: 10,
      max_members: 5,
      concurrency_limit: 5,
    });
    await Workspace.updateOne({ _id: workspaceId }, { $set: { plan: 'growth', concurrency_limit: 30 } });
    expect(await get('/billing/plan', headers)).to.deep.equal({
      id: 'growth',
      name: 'Growth',
      concurrent_calls: 20,
      price_per_minute_paise: 350,
      max_agents: 50,
      max_members: 20,
      concurrency_limit: 30,
    });
    await Workspace.updateOne({ _id: workspaceId }, { $set: { plan: 'scale', concurrency_limit: null } });
    expect(await get('/billing/plan', headers)).to.include({ concurrent_calls: 50, max_agents: null, max_members: null, concurrency_limit: 50 });
  });

  it('lists credit packs whose price is before GST and whose bonus grows with the pack', async () => {
    const { headers } = await owner();
    const packs = await get('/billing/packs', headers);
    expect(packs.map((p: { id: string }) => p.id)).to.deep.equal(['pack_500', 'pack_1000', 'pack_2500', 'pack_5000', 'pack_10000']);
    expect(packs[0]).to.deep.equal({
      id: 'pack_500',
      name: '₹500 pack',
      value_paise: 50_000,
      bonus_paise: 0,
      credits_paise: 50_000,
      gst_paise: 9_000,
      total_paise: 59_000,
    });
    expect(packs[4]).to.include({ value_paise: 1_000_000, bonus_paise: 200_000, credits_paise: 1_200_000, total_paise: 1_180_000 });
    for (let i = 1; i < packs.length; i++)
      expect(packs[i].bonus_paise / packs[i].value_paise).to.be.greaterThan(packs[i - 1].bonus_paise / packs[i - 1].value_paise);
  });

  it('lets API keys read the balance and ledger; viewers and developers may not, and onboarding workspaces are refused', async () => {
    const { workspaceId } = await owner();
    const key = await apiKeyFor(workspaceId);
    expect((await get('/billing', key.headers)).credits_paise).to.equal(50_000);
    expect((await get('/billing/ledger', key.headers)).total).to.equal(1);
    for (const role of ['viewer', 'developer'] as const) {
      const member = await memberWithRole(api, workspaceId, role);
      const refused = await get('/billing', member.headers, 403);
      expect(refused).to.include({ permission: 'billing.view' });
      await get('/billing/ledger', member.headers, 403);
    }
    const admin = await memberWithRole(api, workspaceId, 'admin');
    expect((await get('/billing/plan', admin.headers)).id).to.equal('starter');
    expect(await get('/billing/packs', (await memberWithRole(api, workspaceId, 'viewer')).headers)).to.have.length(5);
    // The contract: billing works before activation (a new owner sees the welcome credits).
    const onboarding = await signUp(api);
    expect(await get('/billing', onboarding.auth)).to.include({ credits_paise: 50_000 });
  });
});
