import { expect } from 'chai';
import { agentDefaults } from '../../../domain/agents/catalog';
import { CALL_STATUSES, FINAL_CALL_STATUSES, LIVE_CALL_STATUSES } from '../../../db/models/call';
import { BATCH_STATUSES, CONTACT_STATUSES } from '../../../db/models/batch';
import { LEDGER_KINDS } from '../../../db/models/ledger-item';
import { DELIVERY_STATUSES } from '../../../db/models/webhook-delivery';
import { DEFAULT_PLAN, PLANS } from '../../../domain/billing/plans';
import { EVENT_TYPES } from '../../../domain/webhooks/event-types';
import { PERMISSIONS, ROLE_PERMISSIONS, ROLES } from '../../../domain/accounts/permissions';
import { openApiDocument } from '../../../api/openapi-document';
import { startApi, type RunningApi } from '../../support/api';
import { apiKeyFor, signUp, type SignedUp } from '../../support/accounts';
import { getOk } from './helpers';

/**
 * `GET /masters`: the console's lists, each checked against the code that enforces it (the
 * permission table, plans, event types, call and batch states, the zones `timezone` accepts).
 */
describe('masters', () => {
  let api: RunningApi;
  let owner: SignedUp;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let masters: any;

  before(async () => {
    api = await startApi();
    owner = await signUp(api); // onboarding: the console needs the lists before activation
    masters = await getOk(api, '/api/v1/masters', owner.auth);
  });
  after(() => api.close());

  it('has the roles with their permissions, and the permissions, as the permission table', () => {
    expect(masters.roles.map((r: { id: string }) => r.id)).to.deep.equal([...ROLES]);
    for (const role of masters.roles) expect(new Set(role.permissions)).to.deep.equal(new Set(ROLE_PERMISSIONS[role.id as keyof typeof ROLE_PERMISSIONS]));
    expect(masters.permissions).to.deep.equal([...PERMISSIONS]);
    expect(masters.roles.find((r: { id: string }) => r.id === 'viewer').permissions).to.deep.equal(['agents.view', 'calls.view', 'logs.view', 'members.view']);
  });

  it('has the plans (Starter the default), the event types and the states of calls, deliveries, batches and the ledger', () => {
    expect(masters.plans).to.deep.equal(
      Object.values(PLANS).map((p) => ({
        id: p.id,
        name: p.name,
        concurrent_calls: p.concurrentCalls,
        price_per_minute_paise: p.pricePerMinutePaise,
        max_agents: p.maxAgents,
        max_members: p.maxMembers,
        default: p.id === DEFAULT_PLAN,
      })),
    );
    expect(masters.plans[0]).to.deep.equal({
      id: 'starter',
      name: 'Starter',
      concurrent_calls: 5,
      price_per_minute_paise: 400,
      max_agents: 10,
      max_members: 5,
      default: true,
    });
    expect(masters.event_types.map((e: { type: string }) => e.type)).to.deep.equal(EVENT_TYPES.map((e) => e.type));
    expect(masters.call_statuses.map((s: { id: string }) => s.id)).to.deep.equal([...CALL_STATUSES]);
    for (const status of masters.call_statuses) {
      expect(status.live).to.equal(LIVE_CALL_STATUSES.includes(status.id));
      expect(status.final).to.equal(FINAL_CALL_STATUSES.includes(status.id));
    }
    expect(masters.webhook_delivery_statuses).to.deep.equal([...DELIVERY_STATUSES]);
    expect(masters.ledger_kinds).to.deep.equal([...LEDGER_KINDS]);
    expect(masters.batch_statuses).to.deep.equal([...BATCH_STATUSES]);
    expect(masters.batch_contact_statuses).to.deep.equal([...CONTACT_STATUSES]);
    expect(masters.log_sources).to.deep.equal(['api', 'console']);
  });

  it('has languages the agent schema accepts (the default among them) with names', () => {
    const document = openApiDocument() as { components: { schemas: { LanguageTag: { pattern: string } } } };
    const tag = new RegExp(document.components.schemas.LanguageTag.pattern);
    expect(masters.languages.length).to.be.at.least(10);
    for (const language of masters.languages) expect(language.code).to.match(tag);
    expect(masters.default_language).to.equal(agentDefaults().voice.language);
    expect(masters.languages).to.deep.include({ code: 'hi', name: 'Hindi' });
    expect(masters.languages.map((l: { code: string }) => l.code)).to.include(masters.default_language);
  });

  it('has the time zones `timezone` accepts, with their current offsets', async () => {
    const zones = new Map<string, string>(masters.timezones.map((z: { id: string; utc_offset: string }) => [z.id, z.utc_offset]));
    expect(zones.get('Asia/Kolkata')).to.equal('+05:30');
    expect(zones.get('UTC')).to.equal('+00:00');
    expect(zones.has('Asia/Calcutta')).to.equal(false);
    expect(zones.size).to.be.above(300);
    expect(masters.default_timezone).to.equal('Asia/Kolkata');
    // A sample across the list: the API accepts each and echoes it as listed.
    const ids = [...zones.keys()];
    for (const zone of ids.filter((_, i) => i % 40 === 0)) {
      const res = await api.request(`/api/v1/masters?timezone=${encodeURIComponent(zone)}`, { headers: owner.auth });
      expect(res.status, zone).to.equal(200);
      expect(res.headers.get('x-timezone')).to.equal(zone);
    }
  });

  it('is for any member or key of the workspace; no credentials is 401', async () => {
    expect((await api.request('/api/v1/masters', { headers: (await apiKeyFor(owner.workspaceId)).headers })).status).to.equal(200);
    expect((await api.request('/api/v1/masters')).status).to.equal(401);
  });
});
