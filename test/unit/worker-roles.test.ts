import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ACTIVITIES_BY_ROLE, createActivities, systemClock } from '../../activities';
import { WORKER_ROLES } from '../../workers/roles';
import { ROOT } from '../../scripts/infra/processes';

/** The task queue each workflow runs on (its start options name it), as a worker role. */
const ROLE_OF_WORKFLOW: Record<string, keyof typeof ACTIVITIES_BY_ROLE> = {
  'call.ts': 'calls',
  'slots.ts': 'calls',
  'batch.ts': 'calls',
  'kyc.ts': 'ops',
  'roundtrip.ts': 'ops',
  'privacy-erasure.ts': 'ops',
  'retention.ts': 'ops',
  'workspace-closure.ts': 'ops',
  'kyc-documents.ts': 'ops',
  'analytics.ts': 'analytics',
  'webhook-delivery.ts': 'webhooks',
  'webhook-redelivery.ts': 'webhooks',
  'payment-check.ts': 'billing',
};

/** Modules beside a workflow's own file that hold its activity proxies. */
const PROXY_MODULES_OF_WORKFLOW: Record<string, string[]> = { 'call.ts': ['call-steps.ts'] };

/**
 * The activities a workflow schedules on its own queue: `const { a, b: c } = proxyActivities(...)`
 * (or `proxyLocalActivities`, which run in the same worker) without a `taskQueue`, in its file
 * and the modules that hold its proxies.
 */
function activitiesScheduledBy(file: string): string[] {
  const code = [file, ...(PROXY_MODULES_OF_WORKFLOW[file] ?? [])].map((name) => fs.readFileSync(path.join(ROOT, 'workflows', name), 'utf8')).join('\n');
  const names: string[] = [];
  for (const match of code.matchAll(/const \{([^}]*)\}\s*=\s*proxy(?:Local)?Activities<[^(]*>\(([^)]*)\)/g)) {
    const [, destructured, options] = match;
    if (/taskQueue:/.test(options!)) continue; // another queue's worker serves it
    names.push(
      ...destructured!
        .split(',')
        .map((part) => part.split(':')[0]!.trim())
        .filter(Boolean),
    );
  }
  return names;
}

/** Each worker role registers the activities of its own workflows, not every activity. */
describe('worker roles: each registers its own activities', () => {
  const deps = { clock: systemClock };
  const registered = (role: keyof typeof ACTIVITIES_BY_ROLE) => Object.keys(WORKER_ROLES[role]!.activities(deps));

  for (const [file, role] of Object.entries(ROLE_OF_WORKFLOW)) {
    it(`the ${role} role serves every activity workflows/${file} schedules on its queue`, () => {
      const scheduled = activitiesScheduledBy(file);
      expect(scheduled.length, `no proxyActivities found in workflows/${file}`).to.be.above(0);
      expect(registered(role)).to.include.members(scheduled);
    });
  }

  it('registers no activity on a role whose workflows never schedule it (beyond recordEvent, which the webhooks role offers other processes)', () => {
    for (const role of Object.keys(ACTIVITIES_BY_ROLE) as (keyof typeof ACTIVITIES_BY_ROLE)[]) {
      const used = new Set(
        Object.entries(ROLE_OF_WORKFLOW)
          .filter(([, r]) => r === role)
          .flatMap(([file]) => activitiesScheduledBy(file)),
      );
      const extra = registered(role).filter((name) => !used.has(name) && name !== 'recordEvent');
      expect(extra, role).to.deep.equal([]);
    }
  });

  it('together the roles cover every activity, each exactly once', () => {
    const all = Object.keys(createActivities(deps)).sort();
    const byRole = (Object.keys(ACTIVITIES_BY_ROLE) as (keyof typeof ACTIVITIES_BY_ROLE)[]).flatMap((role) => registered(role)).sort();
    expect(byRole).to.deep.equal(all);
  });
});
