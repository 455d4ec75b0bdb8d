import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { newId } from '../../../db/ids';
import { Workspace } from '../../../db/models/workspace';
import { WORKSPACE_CACHE_MS, WorkspaceCache } from '../../../api/auth/workspace-cache';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, type SignedUp } from '../../support/accounts';

/**
 * Keyed requests reuse the workspace an API process read for at most WORKSPACE_CACHE_MS
 * (decision 0151); the key itself is read on every request (credentials.test.ts, revocation).
 */
describe('the workspace of keyed requests, reused for a moment', () => {
  describe('through the API', () => {
    let api: RunningApi;
    let second: RunningApi;
    let owner: SignedUp;
    before(async () => {
      api = await startApi();
      second = await startApi(); // another API process on the same database
      owner = await activeOwner(api);
    });
    after(async () => {
      await api.close();
      await second.close();
    });

    const planSeen = async (headers: Record<string, string>, on = api): Promise<string> => {
      const res = await on.request('/api/v1/catalog', { headers });
      expect(res.status).to.equal(200);
      return (await res.json()).plan;
    };

    /** Polls until keyed requests see `plan`; answers how long that took after the change. */
    const untilPlan = async (headers: Record<string, string>, plan: string, on: RunningApi): Promise<number> => {
      const changed = performance.now();
      while ((await planSeen(headers, on)) !== plan) {
        if (performance.now() - changed > WORKSPACE_CACHE_MS + 2000)
          throw new Error(`keyed requests still see the old plan after ${WORKSPACE_CACHE_MS + 2000} ms`);
        await sleep(25);
      }
      return performance.now() - changed;
    };

    it('sees a plan change made elsewhere within WORKSPACE_CACHE_MS, in every process', async () => {
      const { headers } = await apiKeyFor(owner.workspaceId);
      expect(await planSeen(headers, api)).to.equal('starter');
      expect(await planSeen(headers, second)).to.equal('starter');
      await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { plan: 'growth' } });
      try {
        const [here, there] = await Promise.all([untilPlan(headers, 'growth', api), untilPlan(headers, 'growth', second)]);
        // The bound, with room for a loaded machine's request latency.
        expect(here).to.be.below(WORKSPACE_CACHE_MS + 500);
        expect(there).to.be.below(WORKSPACE_CACHE_MS + 500);
      } finally {
        await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { plan: 'starter' } });
      }
    });

    it('never serves a session from it: a signed-in user sees a change on the next request', async () => {
      const other = await activeOwner(api);
      const { headers } = await apiKeyFor(other.workspaceId);
      expect(await planSeen(headers)).to.equal('starter');
      await Workspace.updateOne({ _id: other.workspaceId }, { $set: { plan: 'scale' } });
      expect(await planSeen({ ...other.auth, 'X-Workspace-ID': other.workspaceId })).to.equal('scale');
    });
  });

  describe('WorkspaceCache', () => {
    let clock = 0;
    const workspaceId = newId();
    before(async () => {
      const now = new Date();
      await Workspace.create({ _id: workspaceId, name: 'cached', status: 'active', plan: 'starter', created_by: newId(), created_at: now, updated_at: now });
    });
    const rename = (name: string) => Workspace.updateOne({ _id: workspaceId }, { $set: { name } });

    it('reuses a read for ttl milliseconds from when it began, then reads again', async () => {
      const cache = new WorkspaceCache(1000, () => clock);
      clock = 0;
      await rename('first');
      expect(await cache.get(workspaceId)).to.deep.include({ id: workspaceId, name: 'first', status: 'active', plan: 'starter' });
      await rename('second');
      clock = 999;
      expect((await cache.get(workspaceId))?.name).to.equal('first');
      clock = 1000;
      expect((await cache.get(workspaceId))?.name).to.equal('second');
    });

    it('reads again at once after forget (a change made through this process)', async () => {
      const cache = new WorkspaceCache(1000, () => clock);
      clock = 0;
      await rename('before');
      expect((await cache.get(workspaceId))?.name).to.equal('before');
      await rename('after');
      cache.forget(workspaceId);
      expect((await cache.get(workspaceId))?.name).to.equal('after');
    });

    it('shares one read between concurrent requests', async () => {
      const cache = new WorkspaceCache(1000, () => clock);
      expect(cache.get(workspaceId)).to.equal(cache.get(workspaceId));
    });

    it('keeps nothing with a ttl of 0, and never keeps a workspace that does not exist', async () => {
      const off = new WorkspaceCache(0, () => clock);
      await rename('one');
      expect((await off.get(workspaceId))?.name).to.equal('one');
      await rename('two');
      expect((await off.get(workspaceId))?.name).to.equal('two');

      const cache = new WorkspaceCache(1000, () => clock);
      const missing = newId();
      expect(await cache.get(missing)).to.equal(null);
      const now = new Date();
      await Workspace.create({ _id: missing, name: 'late', status: 'active', plan: 'starter', created_by: newId(), created_at: now, updated_at: now });
      expect((await cache.get(missing))?.name).to.equal('late');
    });

    it('never keeps a workspace in onboarding: its activation applies on the next read', async () => {
      const cache = new WorkspaceCache(1000, () => clock);
      clock = 0;
      const onboarding = newId();
      const now = new Date();
      await Workspace.create({ _id: onboarding, name: 'new', status: 'onboarding', plan: 'starter', created_by: newId(), created_at: now, updated_at: now });
      expect((await cache.get(onboarding))?.status).to.equal('onboarding');
      await Workspace.updateOne({ _id: onboarding }, { $set: { status: 'active' } });
      expect((await cache.get(onboarding))?.status).to.equal('active');
    });
  });
});
