import { expect } from 'chai';
import { Agent } from '../../../db/models/agent';
import { activeOwner } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { agentsClient, setPlan, valueAt, withSetting, type BoundCase } from './helpers';

/**
 * Runs rule cases through the real API: every accepted value is created and read back; every
 * refused value is refused by both POST and PUT with the contract's 422 at that field, and
 * nothing changes (no agent is added, the PUT's agent stays at version 1).
 */
export function describeBounds(title: string, cases: BoundCase[]): void {
  describe(title, () => {
    let api: RunningApi;
    let agents: ReturnType<typeof agentsClient>;
    let workspaceId: string;
    let target: { id: string };
    before(async () => {
      api = await startApi();
      const owner = await activeOwner(api);
      workspaceId = owner.workspaceId;
      await setPlan(workspaceId, 'scale'); // room for every accepted value
      agents = agentsClient(api, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId });
      target = await agents.created({ name: 'Target of updates' });
    });
    after(() => api.close());

    for (const c of cases) {
      const base = c.base ?? { name: 'Bounds' };
      for (const { value, stored } of c.ok) {
        it(`${c.title}: accepts ${describeValue(value)}`, async () => {
          const res = await agents.create(withSetting(base, c.path, value));
          const body = await res.json();
          expect(res.status, JSON.stringify(body)).to.equal(201);
          expect(valueAt(body, c.path)).to.deep.equal(stored === undefined ? value : stored);
        });
      }
      for (const { value, type, loc } of c.bad) {
        it(`${c.title}: refuses ${describeValue(value)} with ${type} (POST and PUT)`, async () => {
          const before = await Agent.countDocuments({ workspace_id: workspaceId });
          for (const res of [await agents.create(withSetting(base, c.path, value)), await agents.update(target.id, withSetting(base, c.path, value))]) {
            const body = await res.json();
            expect(res.status, JSON.stringify(body)).to.equal(422);
            // One rule broken, reported at that field (an empty name also fails "not blank").
            expect(
              body.detail.map((i: { type: string }) => i.type),
              JSON.stringify(body),
            ).to.include(type);
            for (const issue of body.detail) {
              expect(issue.loc).to.deep.equal(loc ?? ['body', ...c.path]);
              expect(issue.msg).to.be.a('string').and.not.be.empty;
              expect(issue).to.have.property('input');
            }
          }
          expect(await Agent.countDocuments({ workspace_id: workspaceId })).to.equal(before);
        });
      }
    }

    it('left the agent the refused updates were aimed at unchanged', async () => {
      const stored = await Agent.findById(target.id).lean();
      expect(stored).to.include({ version: 1, name: 'Target of updates' });
    });
  });
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  if (typeof value === 'string' && value.length > 20) return `a string of ${value.length} characters`;
  if (Array.isArray(value) && text.length > 40) return `a list of ${value.length} items`;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
