import { expect } from 'chai';
import { KycRecord } from '../../../db/models/kyc';
import { startApi, type RunningApi } from '../../support/api';
import { activateWorkspace, apiKeyFor, signUp, withJson, type SignedUp } from '../../support/accounts';
import { memberHeaders, validDetails } from './fixtures';

type Details = ReturnType<typeof validDetails>;

describe('KYC business details: GET and PUT /kyc', () => {
  let api: RunningApi;
  let owner: SignedUp;
  before(async () => {
    api = await startApi();
    owner = await signUp(api);
  });
  after(() => api.close());

  const put = (body: unknown, headers = owner.auth) => api.request('/api/v1/kyc', withJson('PUT', body, headers));

  it('answers an empty draft for a new (onboarding) workspace', async () => {
    const fresh = await signUp(api);
    const res = await api.request('/api/v1/kyc', { headers: fresh.auth });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({
      status: 'draft',
      details: null,
      documents: [],
      rejection_reason: null,
      submitted_at: null,
      decided_at: null,
      updated_at: null,
    });
  });

  it('saves the details and answers them back, trimmed, with dates in the zone', async () => {
    const body = validDetails();
    body.legal_name = '  Acme Voice Private Limited ';
    const res = await put(body);
    expect(res.status).to.equal(200);
    const saved = await res.json();
    expect(saved.status).to.equal('draft');
    expect(saved.details).to.deep.equal(validDetails());
    expect(saved.updated_at).to.match(/\+05:30$/);
    const read = await (await api.request('/api/v1/kyc?timezone=UTC', { headers: owner.auth })).json();
    expect(read.details).to.deep.equal(validDetails());
    expect(read.updated_at).to.match(/Z$|\+00:00$/);
  });

  it('PUT replaces: GSTIN and address line 2 are optional and disappear when left out', async () => {
    const { gstin: _gstin, ...withoutGstin } = validDetails();
    const { line2: _line2, ...address } = withoutGstin.address;
    const res = await put({ ...withoutGstin, address });
    expect(res.status).to.equal(200);
    const { details } = await res.json();
    expect(details).not.to.have.property('gstin');
    expect(details.address).not.to.have.property('line2');
  });

  /** Each case: a change to valid details, and the 422 issue it must cause (or null: accepted). */
  const cases: [string, (d: Details) => void, { type: string; loc: (string | number)[] } | null][] = [
    ['legal_name of 2 characters', (d) => (d.legal_name = 'AB'), null],
    ['legal_name of 1 character', (d) => (d.legal_name = 'A'), { type: 'string_too_short', loc: ['body', 'legal_name'] }],
    ['legal_name of 200 characters', (d) => (d.legal_name = 'A'.repeat(200)), null],
    ['legal_name of 201 characters', (d) => (d.legal_name = 'A'.repeat(201)), { type: 'string_too_long', loc: ['body', 'legal_name'] }],
    ['legal_name of blanks', (d) => (d.legal_name = '   '), { type: 'string_pattern_mismatch', loc: ['body', 'legal_name'] }],
    ['an unknown business_type', (d) => (d.business_type = 'corporation'), { type: 'enum', loc: ['body', 'business_type'] }],
    ['a lower-case PAN', (d) => (d.pan = 'aagcb7383j'), { type: 'string_pattern_mismatch', loc: ['body', 'pan'] }],
    ['a PAN of 9 characters', (d) => (d.pan = 'AAGCB7383'), { type: 'string_pattern_mismatch', loc: ['body', 'pan'] }],
    ['a PAN of 11 characters', (d) => (d.pan = 'AAGCB7383JX'), { type: 'string_pattern_mismatch', loc: ['body', 'pan'] }],
    ['a PAN with a digit where a letter belongs', (d) => (d.pan = 'AAGC17383J'), { type: 'string_pattern_mismatch', loc: ['body', 'pan'] }],
    ['a GSTIN whose 14th character is not Z', (d) => (d.gstin = '29AAGCB7383J1Y4'), { type: 'string_pattern_mismatch', loc: ['body', 'gstin'] }],
    ['a GSTIN whose 13th character is 0', (d) => (d.gstin = '29AAGCB7383J0Z4'), { type: 'string_pattern_mismatch', loc: ['body', 'gstin'] }],
    ['a GSTIN of 16 characters', (d) => (d.gstin = '29AAGCB7383J1Z44'), { type: 'string_pattern_mismatch', loc: ['body', 'gstin'] }],
    ['a GSTIN of another PAN', (d) => (d.gstin = '27AAPFU0939F1ZV'), { type: 'value_error', loc: ['body', 'gstin'] }],
    ['a GSTIN with a wrong check character', (d) => (d.gstin = '29AAGCB7383J1Z5'), { type: 'value_error', loc: ['body', 'gstin'] }],
    ['a company PAN for a proprietorship', (d) => (d.business_type = 'proprietorship'), { type: 'value_error', loc: ['body', 'pan'] }],
    ['a company PAN for a society (not checked)', (d) => (d.business_type = 'society'), null],
    ['a firm PAN and GSTIN for an LLP', (d) => Object.assign(d, { business_type: 'llp', pan: 'AAPFU0939F', gstin: '27AAPFU0939F1ZV' }), null],
    ['a state name instead of its code', (d) => (d.address.state = 'Karnataka'), { type: 'enum', loc: ['body', 'address', 'state'] }],
    ['a union territory code (LA)', (d) => (d.address.state = 'LA'), null],
    ['a PIN code starting with 0', (d) => (d.address.pin_code = '060001'), { type: 'string_pattern_mismatch', loc: ['body', 'address', 'pin_code'] }],
    ['a PIN code of 5 digits', (d) => (d.address.pin_code = '56000'), { type: 'string_pattern_mismatch', loc: ['body', 'address', 'pin_code'] }],
    ['a PIN code of 7 digits', (d) => (d.address.pin_code = '5600011'), { type: 'string_pattern_mismatch', loc: ['body', 'address', 'pin_code'] }],
    ['a PIN code starting with 1', (d) => (d.address.pin_code = '110001'), null],
    ['address line 1 empty', (d) => (d.address.line1 = ''), { type: 'string_too_short', loc: ['body', 'address', 'line1'] }],
    ['address line 2 of 201 characters', (d) => (d.address.line2 = 'x'.repeat(201)), { type: 'string_too_long', loc: ['body', 'address', 'line2'] }],
    ['city of 101 characters', (d) => (d.address.city = 'x'.repeat(101)), { type: 'string_too_long', loc: ['body', 'address', 'city'] }],
    ['a phone number without +', (d) => (d.contact.phone = '919876543210'), { type: 'string_pattern_mismatch', loc: ['body', 'contact', 'phone'] }],
    ['a phone number starting +0', (d) => (d.contact.phone = '+0919876543'), { type: 'string_pattern_mismatch', loc: ['body', 'contact', 'phone'] }],
    ['a phone number of 6 digits', (d) => (d.contact.phone = '+123456'), { type: 'string_pattern_mismatch', loc: ['body', 'contact', 'phone'] }],
    ['a phone number of 7 digits', (d) => (d.contact.phone = '+1234567'), null],
    ['a phone number of 15 digits', (d) => (d.contact.phone = '+123456789012345'), null],
    ['a phone number of 16 digits', (d) => (d.contact.phone = '+1234567890123456'), { type: 'string_pattern_mismatch', loc: ['body', 'contact', 'phone'] }],
    ['a contact email that is not an address', (d) => (d.contact.email = 'not-an-email'), { type: 'value_error', loc: ['body', 'contact', 'email'] }],
    ['a contact name of 101 characters', (d) => (d.contact.name = 'x'.repeat(101)), { type: 'string_too_long', loc: ['body', 'contact', 'name'] }],
    ['no legal_name', (d) => delete (d as Partial<Details>).legal_name, { type: 'missing', loc: ['body', 'legal_name'] }],
    ['no contact', (d) => delete (d as Partial<Details>).contact, { type: 'missing', loc: ['body', 'contact'] }],
    ['no PIN code', (d) => delete (d.address as Partial<Details['address']>).pin_code, { type: 'missing', loc: ['body', 'address', 'pin_code'] }],
    ['an unknown field', (d) => Object.assign(d, { turnover: 1 }), { type: 'extra_forbidden', loc: ['body', 'turnover'] }],
  ];
  for (const [name, change, issue] of cases) {
    it(`${issue ? 'refuses' : 'accepts'} ${name}`, async () => {
      const body = validDetails();
      change(body);
      const res = await put(body);
      if (!issue) {
        expect(res.status, JSON.stringify(await res.clone().json())).to.equal(200);
        return;
      }
      expect(res.status).to.equal(422);
      const { detail } = await res.json();
      const found = (detail as { type: string; loc: unknown[]; msg: string }[]).find(
        (d) => d.type === issue.type && JSON.stringify(d.loc) === JSON.stringify(issue.loc),
      );
      expect(found, JSON.stringify(detail)).to.exist;
      expect(found?.msg).to.be.a('string').and.not.be.empty;
      expect(found).to.have.property('input');
    });
  }

  it('names the rule and echoes the input in a cross-field 422', async () => {
    const res = await put({ ...validDetails(), gstin: '27AAPFU0939F1ZV' });
    const [issue] = (await res.json()).detail;
    expect(issue).to.deep.equal({
      type: 'value_error',
      loc: ['body', 'gstin'],
      msg: 'characters 3 to 12 of the GSTIN must be the PAN',
      input: '27AAPFU0939F1ZV',
    });
  });

  it('answers 409 while the details are submitted or approved, and saves nothing', async () => {
    const other = await signUp(api);
    expect((await put(validDetails(), other.auth)).status).to.equal(200);
    for (const status of ['submitted', 'approved'] as const) {
      await KycRecord.updateOne({ _id: other.workspaceId }, { $set: { status } });
      const res = await put({ ...validDetails(), legal_name: 'Changed Name' }, other.auth);
      expect(res.status).to.equal(409);
      expect((await res.json()).detail).to.include(status === 'approved' ? 'already approved' : 'already submitted');
    }
    expect((await KycRecord.findById(other.workspaceId).lean())?.details?.legal_name).to.equal('Acme Voice Private Limited');
  });

  it('keeps each workspace to its own details', async () => {
    const other = await signUp(api);
    await put(validDetails());
    const res = await api.request('/api/v1/kyc', { headers: other.auth });
    expect((await res.json()).details).to.equal(null);
  });

  it('is for the owner only: admin, developer and viewer get 403 naming kyc.manage, before the body is read', async () => {
    for (const role of ['admin', 'developer', 'viewer'] as const) {
      const headers = await memberHeaders(api, owner.workspaceId, role);
      for (const res of [await api.request('/api/v1/kyc', { headers }), await put({ nonsense: true }, headers)]) {
        expect(res.status, role).to.equal(403);
        const body = await res.json();
        expect(body.detail).to.include('kyc.manage');
        expect(body.permission).to.equal('kyc.manage');
      }
    }
  });

  it('needs a session: no credentials is 401, an API key is 403', async () => {
    const anonymous = await api.request('/api/v1/kyc');
    expect(anonymous.status).to.equal(401);
    expect(anonymous.headers.get('www-authenticate')).to.match(/^Bearer/);
    const key = await apiKeyFor(owner.workspaceId);
    const res = await api.request('/api/v1/kyc', { headers: key.headers });
    expect(res.status).to.equal(403);
    expect((await res.json()).detail).to.include('session');
  });

  it('still works once the workspace is active', async () => {
    const active = await signUp(api);
    await activateWorkspace(active.workspaceId);
    expect((await api.request('/api/v1/kyc', { headers: active.auth })).status).to.equal(200);
  });
});
