import { expect } from 'chai';
import { Agent } from '../../../db/models/agent';
import { BatchContact } from '../../../db/models/batch-contact';
import { appendLedgerItem, balanceOf } from '../../../domain/billing/ledger';
import { activeOwner, apiKeyFor, holdNumbers, memberWithRole, type SignedUp } from '../../support/accounts';
import { randomNumbers } from '../../support/providers';
import { startApi, type RunningApi } from '../../support/api';
import { agentsClient } from '../agents/helpers';
import { batchesClient, createdBatch, uploadBatch, type Contact } from './helpers';

/** Caller numbers: the owner's, another workspace's, one with no credits, and one nobody holds. */
const [FROM, OTHERS_FROM, BROKES_FROM, NOBODYS] = randomNumbers(4);
/** A day ahead: these batches wait, so that no worker is needed and nothing is dialled. */
const tomorrow = () => new Date(Date.now() + 24 * 3600_000).toISOString();
const number = (i: number) => `+9197${String(i).padStart(8, '0')}`;
const E164_REASON = 'not an E.164 number (+ and 7 to 15 digits, e.g. +919812345678)';

/**
 * A file of 500 good contacts with bad rows among them: after every 50th contact, in turn, a
 * number without `+`, a duplicate of the first contact, a row with a cell missing, and a row
 * with no number. Answers the CSV and the exact report expected.
 */
function fileOf500(): { csv: string; rejected: { row: number; number: string; reason: string }[] } {
  const lines = ['number,name,city,plan,notes'];
  const rejected: { row: number; number: string; reason: string }[] = [];
  const bad = [
    (i: number) => ({ line: `97${String(i).padStart(8, '0')},Bad ${i},Pune,gold,x`, number: `97${String(i).padStart(8, '0')}`, reason: E164_REASON }),
    () => ({ line: `${number(0)},Again,Pune,gold,x`, number: number(0), reason: 'duplicate of row 2' }),
    (i: number) => ({ line: `${number(90_000 + i)},Short,Pune,gold`, number: number(90_000 + i), reason: 'has 4 cells; the header has 5' }),
    () => ({ line: ',Nobody,Pune,gold,x', number: '', reason: 'no number' }),
  ];
  for (let i = 0; i < 500; i++) {
    lines.push(`${number(i)},Person ${i},${i % 2 ? 'Pune' : 'Delhi'},${i % 3 ? 'silver' : 'gold'},note ${i}`);
    if (i % 50 === 49) {
      const row = bad[Math.floor(i / 50) % bad.length](i);
      lines.push(row.line);
      rejected.push({ row: lines.length, number: row.number, reason: row.reason });
    }
  }
  return { csv: lines.join('\n') + '\n', rejected };
}

describe('Batches: creating one from a CSV, reading it and its contacts', function () {
  this.timeout(120_000);
  let api: RunningApi;
  let owner: SignedUp;
  let agentId: string;
  let batchId: string;
  let contacts: ReturnType<typeof batchesClient>;

  before(async () => {
    api = await startApi();
    owner = await activeOwner(api, { name: 'Asha Rao' });
    await holdNumbers(owner.workspaceId, FROM);
    agentId = (await agentsClient(api, owner.auth).created({ name: 'Collector' })).id;
    contacts = batchesClient(api, owner.auth);
    const { csv } = fileOf500();
    batchId = (await createdBatch(api, owner.auth, csv, { agent_id: agentId, from_number: FROM, start_at: tomorrow() })).batch.id;
  });
  after(async () => {
    await api?.close();
  });

  it('takes 500 contacts and reports every rejected row exactly (bad numbers, duplicates, wrong cell counts, no number)', async () => {
    const { csv, rejected } = fileOf500();
    expect(rejected).to.have.length(10);
    const start = tomorrow();
    const created = await createdBatch(api, owner.auth, csv, {
      agent_id: agentId,
      from_number: FROM,
      start_at: start,
      name: 'Renewals',
      max_attempts: '3',
      retry_spacing_seconds: '600',
    });
    expect(created.rejected_rows).to.deep.equal(rejected);
    expect(created.rejected_rows.slice(0, 2)).to.deep.equal([
      { row: 52, number: '9700000049', reason: E164_REASON },
      { row: 103, number: '+919700000000', reason: 'duplicate of row 2' },
    ]);
    const { batch } = created;
    expect(batch).to.deep.include({
      name: 'Renewals',
      agent_id: agentId,
      agent_name: 'Collector',
      from_number: FROM,
      status: 'scheduled',
      status_reason: null,
      max_attempts: 3,
      retry_spacing_seconds: 600,
      number_column: 'number',
      file_name: 'contacts.csv',
      contacts_total: 500,
      rejected_total: 10,
      created_by: 'Asha Rao',
      started_at: null,
      ended_at: null,
    });
    expect(batch.columns).to.deep.equal(['name', 'city', 'plan', 'notes']);
    expect(Date.parse(batch.start_at as string)).to.equal(Date.parse(start));
    expect(batch.counts).to.deep.equal({ pending: 500, calling: 0, 'retry-wait': 0, completed: 0, 'no-answer': 0, busy: 0, failed: 0, canceled: 0 });
    expect(await contacts.get(batch.id)).to.deep.include({ contacts_total: 500, status: 'scheduled' });
  });

  it('lists the contacts in file order, 50 by default, with the line each came from', async () => {
    const first = await contacts.contactsPage(batchId);
    expect(first.status).to.equal(200);
    const page = await first.json();
    expect(page.total).to.equal(500);
    expect(page.items).to.have.length(50);
    expect(page.items[0]).to.deep.equal({
      row: 2,
      number: number(0),
      user_data: { name: 'Person 0', city: 'Delhi', plan: 'gold', notes: 'note 0' },
      status: 'pending',
      attempts: 0,
      latest_call_id: null,
      next_attempt_at: null,
      updated_at: page.items[0].updated_at,
    });
    const all: Contact[] = await contacts.allContacts(batchId);
    expect(all.map((c) => c.number)).to.deep.equal(Array.from({ length: 500 }, (_, i) => number(i)));
    // Lines 52, 103, ... held rejected rows: the next contact's line skips them.
    expect(all[49].row).to.equal(51);
    expect(all[50].row).to.equal(53);
    const rows = all.map((c) => c.row);
    expect(rows).to.deep.equal([...rows].sort((a, b) => a - b));
    const skipped = await (await contacts.contactsPage(batchId, 'skip=498&limit=200')).json();
    expect(skipped.items.map((c: Contact) => c.number)).to.deep.equal([number(498), number(499)]);
    expect(skipped.total).to.equal(500);
  });

  it('filters by a comma list of statuses', async () => {
    const pending = await (await contacts.contactsPage(batchId, 'status=pending,canceled&limit=1')).json();
    expect(pending.total).to.equal(500);
    const none = await (await contacts.contactsPage(batchId, 'status=completed,no-answer')).json();
    expect(none).to.deep.equal({ items: [], total: 0 });
    await BatchContact.updateOne({ _id: `${batchId}:000007` }, { $set: { status: 'busy', attempts: 1 } });
    const busy = await (await contacts.contactsPage(batchId, 'status=busy')).json();
    expect(busy.total).to.equal(1);
    expect(busy.items[0]).to.deep.include({ number: number(7), status: 'busy', attempts: 1 });
  });

  it('finds contacts by part of the number or a value in the first three columns, not in later ones', async () => {
    const q = async (text: string) =>
      (await (await contacts.contactsPage(batchId, `q=${encodeURIComponent(text)}&limit=200`)).json()) as { items: Contact[]; total: number };
    expect((await q(number(123))).items.map((c) => c.number)).to.deep.equal([number(123)]);
    expect((await q('0000012')).items.map((c) => c.number)).to.deep.equal([
      number(12),
      number(120),
      number(121),
      number(122),
      number(123),
      number(124),
      number(125),
      number(126),
      number(127),
      number(128),
      number(129),
    ]);
    expect((await q('person 42')).items.map((c) => c.number).slice(0, 2)).to.deep.equal([number(42), number(420)]);
    expect((await q('DELHI')).total).to.equal(250);
    expect((await q('silver')).total).to.equal(333);
    // `notes` is the fourth column after the number.
    expect((await q('note 1')).total).to.equal(0);
    // Regular-expression characters are taken literally.
    expect((await q('.*')).total).to.equal(0);
    const both = await (await contacts.contactsPage(batchId, 'q=Delhi&status=pending&limit=1')).json();
    expect(both.total).to.equal(250);
  });

  it('answers 422 on each bound of the contacts query, and 200 just inside it', async () => {
    const statuses120 = `${'busy,'.repeat(21)}calling,pending`;
    const statuses121 = `${'busy,'.repeat(21)}canceled,pending`;
    expect([statuses120.length, statuses121.length]).to.deep.equal([120, 121]);
    const cases: [string, number][] = [
      [`status=${statuses120}`, 200],
      [`status=${statuses121}`, 422],
      ['status=unknown', 422],
      [`q=${'1'.repeat(80)}`, 200],
      [`q=${'1'.repeat(81)}`, 422],
      ['limit=0', 422],
      ['limit=1', 200],
      ['limit=200', 200],
      ['limit=201', 422],
      ['skip=-1', 422],
      ['skip=0', 200],
    ];
    for (const [query, status] of cases) {
      const res = await contacts.contactsPage(batchId, query);
      expect(res.status, query).to.equal(status);
      if (status === 422) expect((await res.json()).detail[0].loc[0], query).to.equal('query');
    }
  });

  it('lets API keys and viewers read contacts (calls.view); viewers cannot create batches (calls.place)', async () => {
    const key = await apiKeyFor(owner.workspaceId);
    expect((await batchesClient(api, key.headers).contactsPage(batchId, 'limit=1')).status).to.equal(200);
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    expect((await batchesClient(api, viewer.headers).contactsPage(batchId, 'limit=1')).status).to.equal(200);
    const refused = await uploadBatch(api, viewer.headers, `number\n${number(1)}\n`, { agent_id: agentId, from_number: FROM, start_at: tomorrow() });
    expect(refused.status).to.equal(403);
    const byKey = await createdBatch(api, key.headers, `number\n${number(1)}\n`, { agent_id: agentId, from_number: FROM, start_at: tomorrow() });
    expect(byKey.batch.created_by).to.equal('key:test key');
    expect((await api.request(`/api/v1/batches/${batchId}/contacts`)).status).to.equal(401);
  });

  it("answers 404 for another workspace's batch and its contacts", async () => {
    const stranger = await activeOwner(api);
    expect((await api.request(`/api/v1/batches/${batchId}`, { headers: stranger.auth })).status).to.equal(404);
    expect((await batchesClient(api, stranger.auth).contactsPage(batchId)).status).to.equal(404);
    expect((await batchesClient(api, stranger.auth).control(batchId, 'cancel')).status).to.equal(404);
    expect((await api.request(`/api/v1/batches/${'0'.repeat(32)}`, { headers: owner.auth })).status).to.equal(404);
  });

  it('lists batches newest first with their counts, filtered by status and agent', async () => {
    const other = await activeOwner(api);
    await holdNumbers(other.workspaceId, OTHERS_FROM);
    const otherAgent = (await agentsClient(api, other.auth).created({ name: 'Other' })).id;
    const first = await createdBatch(api, other.auth, `number\n${number(1)}\n${number(2)}\n`, {
      agent_id: otherAgent,
      from_number: OTHERS_FROM,
      start_at: tomorrow(),
      name: 'first',
    });
    const second = await createdBatch(api, other.auth, `number\n${number(3)}\n`, {
      agent_id: otherAgent,
      from_number: OTHERS_FROM,
      start_at: tomorrow(),
      name: 'second',
    });
    const list = await (await api.request('/api/v1/batches', { headers: other.auth })).json();
    expect(list.total).to.equal(2);
    expect(list.items.map((b: { name: string }) => b.name)).to.deep.equal(['second', 'first']);
    expect(list.items[1].counts.pending).to.equal(2);
    expect((await (await api.request('/api/v1/batches?status=running,paused', { headers: other.auth })).json()).total).to.equal(0);
    expect((await (await api.request('/api/v1/batches?status=scheduled&limit=1&skip=1', { headers: other.auth })).json()).items[0].id).to.equal(first.batch.id);
    expect((await (await api.request(`/api/v1/batches?agent_id=${agentId}`, { headers: other.auth })).json()).total).to.equal(0);
    expect(second.batch.id).to.not.equal(first.batch.id);
    expect((await api.request('/api/v1/batches?limit=201', { headers: other.auth })).status).to.equal(422);
  });

  describe('refusals', () => {
    const csv = `phone,name\n${number(1)},A\n`;
    it('answers 422 without a file, with an unreadable file, or when every row is rejected (with the report)', async () => {
      const form = new FormData();
      form.append('agent_id', agentId);
      const noFile = await api.request('/api/v1/batches', { method: 'POST', body: form, headers: owner.auth });
      expect(noFile.status).to.equal(422);
      expect((await noFile.json()).detail[0]).to.deep.include({ type: 'missing', loc: ['body', 'file'] });

      const noColumn = await uploadBatch(api, owner.auth, 'name,city\nA,Pune\n', { agent_id: agentId, from_number: FROM });
      expect(noColumn.status).to.equal(422);
      expect((await noColumn.json()).detail[0]).to.deep.include({
        loc: ['body', 'file'],
        msg: 'no number column: name one with number_column, or call a column one of number, phone_number, phone, mobile, to_number',
      });

      const allBad = await uploadBatch(api, owner.auth, 'number\n12345\n+91\n', { agent_id: agentId, from_number: FROM });
      expect(allBad.status).to.equal(422);
      const body = await allBad.json();
      expect(body.detail[0].loc).to.deep.equal(['body', 'file']);
      expect(body.rejected_rows).to.deep.equal([
        { row: 2, number: '12345', reason: E164_REASON },
        { row: 3, number: '+91', reason: E164_REASON },
      ]);
    });

    it('checks the form: agent, attempts, spacing, start time, number column', async () => {
      const stranger = await activeOwner(api);
      const strangersAgent = (await agentsClient(api, stranger.auth).created({ name: 'Theirs' })).id;
      const cases: [Record<string, string>, string][] = [
        [{ agent_id: strangersAgent }, 'agent_id'],
        [{ agent_id: agentId, max_attempts: '0' }, 'max_attempts'],
        [{ agent_id: agentId, max_attempts: '11' }, 'max_attempts'],
        [{ agent_id: agentId, retry_spacing_seconds: '0' }, 'retry_spacing_seconds'],
        [{ agent_id: agentId, retry_spacing_seconds: '604801' }, 'retry_spacing_seconds'],
        [{ agent_id: agentId, start_at: new Date(Date.now() + 31 * 24 * 3600_000).toISOString() }, 'start_at'],
        [{ agent_id: agentId, start_at: 'soon' }, 'start_at'],
        [{ agent_id: agentId, from_number: '98000' }, 'from_number'],
      ];
      for (const [fields, field] of cases) {
        const res = await uploadBatch(api, owner.auth, csv, { from_number: FROM, ...fields });
        expect(res.status, field).to.equal(422);
        expect(
          (await res.json()).detail.map((d: { loc: string[] }) => d.loc[1]),
          field,
        ).to.include(field);
      }
      for (const fields of [{ max_attempts: '10' }, { retry_spacing_seconds: '604800' }, { retry_spacing_seconds: '1' }]) {
        expect(
          (await uploadBatch(api, owner.auth, csv, { agent_id: agentId, from_number: FROM, start_at: tomorrow(), ...fields })).status,
          JSON.stringify(fields),
        ).to.equal(201);
      }
      const named = await createdBatch(api, owner.auth, 'name,alt\nA,+919800000001\n', {
        agent_id: agentId,
        from_number: FROM,
        start_at: tomorrow(),
        number_column: 'alt',
      });
      expect(named.batch).to.deep.include({ number_column: 'alt', name: 'contacts', max_attempts: 1, retry_spacing_seconds: 1800 });
      expect(named.batch.columns).to.deep.equal(['name']);
    });

    it('answers as POST /calls does for a paused agent (409), no caller number (400) and no credits (402)', async () => {
      const fresh = await activeOwner(api);
      const agent = (await agentsClient(api, fresh.auth).created({ name: 'Quiet' })).id;
      expect((await uploadBatch(api, fresh.auth, csv, { agent_id: agent })).status).to.equal(400);
      await Agent.updateOne({ _id: agent }, { $set: { status: 'paused' } });
      expect((await uploadBatch(api, fresh.auth, csv, { agent_id: agent, from_number: FROM })).status).to.equal(409);
      const broke = await activeOwner(api);
      const brokeAgent = (await agentsClient(api, broke.auth).created({ name: 'Broke' })).id;
      await appendLedgerItem({
        workspaceId: broke.workspaceId,
        kind: 'adjustment',
        amountPaise: -(await balanceOf(broke.workspaceId)),
        idempotencyKey: `test-zero-${broke.workspaceId}`,
        at: new Date(),
      });
      await holdNumbers(broke.workspaceId, BROKES_FROM);
      const refused = await uploadBatch(api, broke.auth, csv, { agent_id: brokeAgent, from_number: BROKES_FROM });
      expect(refused.status).to.equal(402);
      expect((await (await api.request('/api/v1/batches', { headers: broke.auth })).json()).total).to.equal(0);
    });

    it("refuses at once a from_number the workspace does not hold (400 naming it), also another workspace's", async () => {
      const before = (await (await api.request('/api/v1/batches', { headers: owner.auth })).json()).total;
      for (const from of [NOBODYS, OTHERS_FROM]) {
        const res = await uploadBatch(api, owner.auth, csv, { agent_id: agentId, from_number: from, start_at: tomorrow() });
        expect(res.status).to.equal(400);
        const { detail } = await res.json();
        expect(detail).to.include(`from_number ${from} is not a number of this workspace`);
        expect(detail).to.include('POST /phone-numbers');
      }
      expect((await (await api.request('/api/v1/batches', { headers: owner.auth })).json()).total).to.equal(before);
    });
  });
});
