import { expect } from 'chai';
import { AuditEvent } from '../../../db/models/audit-event';
import { PhoneNumber } from '../../../db/models/phone-number';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';

/**
 * The provider pool and the workspace's numbers: available numbers (from the telephony
 * simulator over HTTP), claiming, releasing, conflicts between workspaces, who may.
 */
describe('phone numbers: available, claim, release', () => {
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let headers: Record<string, string>;
  let rival: Record<string, string>;
  before(async () => {
    providers = await startTestProviders({ poolSize: 45, timeoutMs: 400 });
    api = await startApi({ providers: providers.config });
    owner = await activeOwner(api);
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
    const other = await activeOwner(api);
    rival = { ...other.auth, 'X-Workspace-ID': other.workspaceId };
  });
  afterEach(() => {
    providers.telephony.mode = 'normal';
  });
  after(async () => {
    await api.close();
    await providers.close();
  });

  /** A number of the simulator's pool that nobody has claimed yet in this file. */
  let next = 0;
  const poolNumber = () => {
    return providers.pool[next++ % providers.pool.length]!;
  };
  const claim = (number: unknown, h = headers) => api.request('/api/v1/phone-numbers', withJson('POST', { number }, h));
  const list = async (h = headers) => (await api.request('/api/v1/phone-numbers', { headers: h })).json();
  const available = (query = '', h = headers) => api.request(`/api/v1/phone-numbers/available${query}`, { headers: h });
  const release = (number: string, h = headers) => api.request(`/api/v1/phone-numbers/${encodeURIComponent(number)}`, { method: 'DELETE', headers: h });

  it('lists the pool’s numbers, paging through the provider (45 numbers, 20 a page)', async () => {
    const res = await available('?limit=100');
    expect(res.status).to.equal(200);
    const body = await res.json();
    expect(body.map((n: { number: string }) => n.number)).to.deep.equal(providers.pool);
    expect(body[0]).to.deep.equal({ number: body[0].number, region: 'Bangalore, INDIA', number_type: 'local' });
  });

  it('limits the list (default 20, 1 to 100) and filters by the digits a number starts with', async () => {
    expect(await (await available()).json()).to.have.length(20);
    expect(await (await available('?limit=1')).json()).to.have.length(1);
    const wanted = providers.pool[7]!;
    for (const prefix of [wanted, wanted.slice(1)]) {
      const body = await (await available(`?starts_with=${encodeURIComponent(prefix)}`)).json();
      expect(
        body.map((n: { number: string }) => n.number),
        prefix,
      ).to.deep.equal([wanted]);
    }
    for (const [query, type] of [
      ['?limit=0', 'greater_than_equal'],
      ['?limit=101', 'less_than_equal'],
      ['?starts_with=91a', 'string_pattern_mismatch'],
    ]) {
      const res = await available(query);
      expect(res.status, query).to.equal(422);
      expect((await res.json()).detail[0].type, query).to.equal(type);
    }
  });

  it('leaves out numbers without voice and numbers any workspace holds', async () => {
    const [smsOnly] = randomNumbers(1);
    providers.telephony.addNumber(smsOnly!, { voice_enabled: false });
    const mine = poolNumber();
    const theirs = poolNumber();
    expect((await claim(mine)).status).to.equal(201);
    expect((await claim(theirs, rival)).status).to.equal(201);
    const listed = (await (await available('?limit=100')).json()).map((n: { number: string }) => n.number);
    expect(listed).not.to.include(smsOnly).and.not.to.include(mine).and.not.to.include(theirs);
    expect((await claim(smsOnly)).status).to.equal(409);
  });

  it('claims a number: 201, listed with who claimed it; claiming it again changes nothing (200)', async () => {
    const number = poolNumber();
    const res = await claim(number);
    expect(res.status).to.equal(201);
    const body = await res.json();
    expect(body).to.include({
      number,
      agent_id: null,
      agent_name: null,
      region: 'Bangalore, INDIA',
      number_type: 'local',
      claimed_by: 'Asha Rao',
      connected_at: null,
    });
    expect(body.claimed_at).to.match(/\+05:30$/);
    const again = await claim(number);
    expect(again.status).to.equal(200);
    expect(await again.json()).to.deep.equal(body);
    expect((await list()).filter((n: { number: string }) => n.number === number)).to.deep.equal([body]);
    expect(
      await AuditEvent.countDocuments({ workspace_id: owner.workspaceId, action: 'phone_number.claimed', 'target.name': number }),
      'recorded once',
    ).to.equal(1);
  });

  it('answers 409 for a number another workspace uses, and changes nothing', async () => {
    const number = poolNumber();
    expect((await claim(number, rival)).status).to.equal(201);
    const res = await claim(number);
    expect(res.status).to.equal(409);
    expect((await res.json()).detail).to.equal(`${number} is used by another workspace`);
    expect(await PhoneNumber.find({ number }).lean()).to.have.length(1);
    expect((await list()).map((n: { number: string }) => n.number)).not.to.include(number);
  });

  it('lets exactly one of two workspaces claiming the same number at once have it', async () => {
    const number = poolNumber();
    const statuses = (await Promise.all([claim(number), claim(number, rival)])).map((r) => r.status).sort();
    expect(statuses).to.deep.equal([201, 409]);
    expect(await PhoneNumber.countDocuments({ number })).to.equal(1);
  });

  it('answers 409 for a number the provider does not offer', async () => {
    const [unknown] = randomNumbers(1);
    const res = await claim(unknown);
    expect(res.status).to.equal(409);
    expect((await res.json()).detail).to.include('is not available');
    expect(await PhoneNumber.countDocuments({ number: unknown })).to.equal(0);
  });

  it('answers 422 for a number that is not E.164, and stores nothing', async () => {
    const before = await PhoneNumber.countDocuments({ workspace_id: owner.workspaceId });
    for (const bad of ['918040000001', '+0918040000', '+123456', '+1234567890123456', '+91 80 4000 0001', 91804000000, null]) {
      const res = await claim(bad);
      expect(res.status, String(bad)).to.equal(422);
      const { detail } = await res.json();
      expect(detail[0].loc, String(bad)).to.deep.equal(['body', 'number']);
    }
    expect((await claim('+1234567')).status, 'seven digits is a valid length; the pool does not have it').to.equal(409);
    expect((await api.request('/api/v1/phone-numbers', withJson('POST', {}, headers))).status).to.equal(422);
    expect(await PhoneNumber.countDocuments({ workspace_id: owner.workspaceId })).to.equal(before);
  });

  it('answers 502 when the provider fails or does not answer, and stores nothing', async () => {
    for (const mode of ['failing', 'hanging'] as const) {
      providers.telephony.mode = mode;
      const number = poolNumber();
      const res = await claim(number);
      expect(res.status, mode).to.equal(502);
      expect((await res.json()).detail, mode).to.match(/^the telephony provider did not answer .*; retry/);
      expect(await PhoneNumber.countDocuments({ number }), mode).to.equal(0);
      expect((await available()).status, mode).to.equal(502);
    }
  });

  it('answers 502 with wrong provider credentials or no provider configured', async () => {
    for (const telephony of [{ ...providers.config.telephony!, authToken: 'wrong' }, null]) {
      const other = await startApi({ providers: { ...providers.config, telephony } });
      try {
        expect((await other.request('/api/v1/phone-numbers/available', { headers })).status).to.equal(502);
      } finally {
        await other.close();
      }
    }
  });

  it('releases a number: 204, gone from the list, available again and claimable by another workspace', async () => {
    const number = poolNumber();
    await claim(number);
    expect((await release(number, rival)).status, 'another workspace’s number').to.equal(404);
    expect((await release(number)).status).to.equal(204);
    expect((await release(number)).status, 'twice').to.equal(404);
    expect(await AuditEvent.countDocuments({ workspace_id: owner.workspaceId, action: 'phone_number.released', 'target.name': number })).to.equal(1);
    expect((await list()).map((n: { number: string }) => n.number)).not.to.include(number);
    expect((await (await available('?limit=100')).json()).map((n: { number: string }) => n.number)).to.include(number);
    expect((await claim(number, rival)).status).to.equal(201);
  });

  it('takes the number in the path with + or %2B, and answers 422 for a malformed one', async () => {
    const number = poolNumber();
    await claim(number);
    expect((await api.request(`/api/v1/phone-numbers/${number}`, { method: 'DELETE', headers })).status).to.equal(204);
    const res = await release('91804');
    expect(res.status).to.equal(422);
    expect((await res.json()).detail[0].loc).to.deep.equal(['path', 'number']);
  });

  it('lets only numbers.manage claim and release (admin yes; developer, viewer and keys 403); everyone with agents.view lists', async () => {
    const admin = await memberWithRole(api, owner.workspaceId, 'admin');
    const developer = await memberWithRole(api, owner.workspaceId, 'developer');
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    const key = await apiKeyFor(owner.workspaceId);
    const number = poolNumber();
    for (const h of [developer.headers, viewer.headers, key.headers]) {
      const res = await claim(number, h);
      expect(res.status).to.equal(403);
      expect((await res.json()).permission).to.equal('numbers.manage');
    }
    expect((await claim(number, admin.headers)).status).to.equal(201);
    for (const h of [developer.headers, key.headers]) expect((await release(number, h)).status).to.equal(403);
    for (const h of [viewer.headers, key.headers]) {
      expect((await list(h)).map((n: { number: string }) => n.number)).to.include(number);
      expect((await available('', h)).status).to.equal(200);
    }
    expect((await release(number, admin.headers)).status).to.equal(204);
  });
});
