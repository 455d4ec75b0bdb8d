import { expect } from 'chai';
import { AuditEvent } from '../../../db/models/audit-event';
import { Workspace } from '../../../db/models/workspace';
import { apiKeyFor, memberWithRole, withJson } from '../../support/accounts';
import { OPEN_HOURS, useCallStack } from '../../support/call-stack';
import { until } from '../../support/until';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';
import { batchesClient, createdBatch } from '../batches/helpers';

type Entry = { number: string; reason: string; source: string; added_by: string; call_id: string | null; created_at: string };

/**
 * The do-not-call list (docs/decisions/0205, 0206), end to end through the real API, workers,
 * media service, database, Temporal and the simulators: the list's endpoints and roles, calls
 * refused to a listed number (placed, queued, in a batch), and a caller's opt-out during a call.
 */
describe('Do not call: the list, the refusals and the opt-out', function () {
  this.timeout(120_000);
  const stack = useCallStack({ numberPrefix: '+9174' });
  const { createAgent, simulated } = stack;
  const http = (path: string, init: RequestInit = {}) =>
    stack.api.request(`/api/v1${path}`, { ...init, headers: { ...stack.owner.auth, ...(init.headers as Record<string, string>) } });
  const add = (number: string, fields: Record<string, unknown> = {}) => http('/do-not-call', withJson('POST', { number, ...fields }));
  const listed = async (): Promise<Entry[]> => (await (await http('/do-not-call?limit=200')).json()).items;

  it('adds, lists newest first with limit and skip, answers a repeated add as it is, removes, and writes audit events', async () => {
    const [a, b] = [stack.callee({ kind: 'busy' }), stack.callee({ kind: 'busy' })];
    const first = await add(a, { reason: 'asked by email' });
    expect(first.status, await first.clone().text()).to.equal(201);
    expect(await first.json()).to.deep.include({ number: a, reason: 'asked by email', source: 'manual', added_by: 'Asha Rao', call_id: null });
    expect((await add(b, { source: 'api' })).status).to.equal(201);
    const again = await add(a, { reason: 'another reason', source: 'import' });
    expect(again.status).to.equal(200);
    expect(await again.json()).to.include({ number: a, reason: 'asked by email', source: 'manual' });

    const page = await (await http('/do-not-call?limit=1&skip=0')).json();
    expect(page.items.map((e: Entry) => e.number)).to.deep.equal([b]);
    expect(page.total).to.be.at.least(2);
    expect((await (await http('/do-not-call?limit=1&skip=1')).json()).items.map((e: Entry) => e.number)).to.deep.equal([a]);

    const removed = await http(`/do-not-call/${encodeURIComponent(a)}`, { method: 'DELETE' });
    expect(removed.status, await removed.clone().text()).to.equal(204);
    expect((await http(`/do-not-call/${encodeURIComponent(a)}`, { method: 'DELETE' })).status).to.equal(404);
    expect((await listed()).map((e) => e.number)).not.to.include(a);

    const actions = (await AuditEvent.find({ workspace_id: stack.owner.workspaceId, 'target.name': a }).sort({ at: 1 }).lean()).map((e) => e.action);
    expect(actions).to.deep.equal(['do_not_call.added', 'do_not_call.removed']);
  });

  it('refuses bad input in the contract 422 shape and changes nothing', async () => {
    const before = (await listed()).length;
    const bad = await add('98123');
    expect(bad.status).to.equal(422);
    expect((await bad.json()).detail[0])
      .to.include({ type: 'string_pattern_mismatch' })
      .and.have.property('loc')
      .that.deep.equals(['body', 'number']);
    expect((await add('+919800000001', { source: 'friend' })).status).to.equal(422);
    const badPath = await http('/do-not-call/12345', { method: 'DELETE' });
    expect(badPath.status).to.equal(422);
    expect((await badPath.json()).detail[0].loc).to.deep.equal(['path', 'number']);
    expect((await listed()).length).to.equal(before);
  });

  it('imports a CSV (multipart and text/csv), reporting bad rows, and exports it back as text/csv', async () => {
    const [x, y, z] = [1, 2, 3].map(() => stack.callee({ kind: 'busy' }));
    const csv = `Phone,Reason,Name\r\n${x.slice(0, 3)} ${x.slice(3)},"opted out, by SMS",Ravi\r\n12345,bad,Nobody\r\n${x},again,Ravi\r\n${y},,Meera\r\n`;
    const form = new FormData();
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'dnc.csv');
    const imported = await http('/do-not-call/import', { method: 'POST', body: form });
    expect(imported.status, await imported.clone().text()).to.equal(200);
    const summary = await imported.json();
    expect(summary).to.deep.include({ added: 2, already_listed: 0, rejected_total: 2 });
    expect(summary.rejected_rows.map((r: { row: number }) => r.row)).to.deep.equal([3, 4]);

    const asText = await http('/do-not-call/import?number_column=mobile', {
      method: 'POST',
      body: `mobile\n${y}\n${z}\n`,
      headers: { 'Content-Type': 'text/csv' },
    });
    expect(asText.status, await asText.clone().text()).to.equal(200);
    expect(await asText.json()).to.deep.include({ added: 1, already_listed: 1, rejected_total: 0 });

    const entries = await listed();
    expect(entries.find((e) => e.number === x)).to.include({ source: 'import', reason: 'opted out, by SMS' });
    expect(entries.find((e) => e.number === z)).to.include({ source: 'import', reason: '' });

    const empty = await http('/do-not-call/import', { method: 'POST', body: 'number\nabc\n', headers: { 'Content-Type': 'text/csv' } });
    expect(empty.status).to.equal(422);
    expect((await empty.json()).detail[0].loc).to.deep.equal(['body', 'file']);

    const exported = await http('/do-not-call/export');
    expect(exported.status).to.equal(200);
    expect(exported.headers.get('content-type')).to.match(/^text\/csv/);
    const text = await exported.text();
    const lines = text.trim().split('\r\n');
    expect(lines[0]).to.equal('number,reason,source,added_by,created_at');
    const row = lines.find((l) => l.startsWith(`${x},`))!;
    expect(row).to.match(new RegExp(`^\\${x},"opted out, by SMS",import,Asha Rao,\\d{4}-\\d{2}-\\d{2}T[0-9:.]+Z$`));

    // The export imports back: every number is listed already.
    const back = await http('/do-not-call/import', { method: 'POST', body: text, headers: { 'Content-Type': 'text/csv' } });
    expect(await back.json()).to.deep.include({ added: 0, already_listed: lines.length - 1, rejected_total: 0 });
    const imports = await AuditEvent.countDocuments({ workspace_id: stack.owner.workspaceId, action: 'do_not_call.imported' });
    expect(imports).to.equal(3);
  });

  it('roles: everyone reads; developers and keys add and import; only owners and admins remove', async () => {
    const ws = stack.owner.workspaceId;
    const number = stack.callee({ kind: 'busy' });
    const viewer = await memberWithRole(stack.api, ws, 'viewer');
    const developer = await memberWithRole(stack.api, ws, 'developer');
    const admin = await memberWithRole(stack.api, ws, 'admin');
    const key = await apiKeyFor(ws);
    const as = (headers: Record<string, string>, path: string, init: RequestInit = {}) =>
      stack.api.request(`/api/v1${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } });

    expect((await as(viewer.headers, '/do-not-call')).status).to.equal(200);
    expect((await as(viewer.headers, '/do-not-call/export')).status).to.equal(200);
    const refused = await as(viewer.headers, '/do-not-call', withJson('POST', { number }));
    expect(refused.status).to.equal(403);
    expect(await refused.json()).to.include({ permission: 'calls.place' });

    const byKey = await as(key.headers, '/do-not-call', withJson('POST', { number }));
    expect(byKey.status).to.equal(201);
    expect(await byKey.json()).to.include({ source: 'api', added_by: 'key:test key' });
    expect((await as(key.headers, `/do-not-call/${encodeURIComponent(number)}`, { method: 'DELETE' })).status).to.equal(403);
    expect((await as(developer.headers, `/do-not-call/${encodeURIComponent(number)}`, { method: 'DELETE' })).status).to.equal(403);
    expect((await as(admin.headers, `/do-not-call/${encodeURIComponent(number)}`, { method: 'DELETE' })).status).to.equal(204);
  });

  it('POST /calls to a listed number is 422 naming the number, and no call is made', async () => {
    const agent = await createAgent({ call: OPEN_HOURS });
    const to = stack.callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Bye.' }] });
    expect((await add(to)).status).to.equal(201);
    const res = await http(
      '/calls',
      withJson('POST', { agent_id: agent.id, to_number: to, from_number: await stack.providers.callerFor(stack.owner.workspaceId) }),
    );
    expect(res.status).to.equal(422);
    const [issue] = (await res.json()).detail;
    expect(issue).to.deep.include({ type: 'value_error', loc: ['body', 'to_number'], input: to });
    expect(issue.msg).to.include(to).and.include('do-not-call');
    expect(simulated(to)).to.deep.equal([]);
    const calls = await (await http(`/calls?number=${encodeURIComponent(to)}`)).json();
    expect(calls.total).to.equal(0);
  });

  it('a number listed while its call is queued is not dialled: the call is canceled at the front of the queue', async () => {
    await Workspace.updateOne({ _id: stack.owner.workspaceId }, { $set: { concurrency_limit: 1 } });
    try {
      const agent = await createAgent({ call: OPEN_HOURS });
      // The first call holds the only slot until it is hung up.
      const busyLine = stack.callee({ kind: 'answer', answerAfterSeconds: 1 });
      const holder = await stack.place(agent.id, busyLine);
      await until(
        () => stack.getCall(holder.id),
        (c) => c.status === 'in-progress',
        30_000,
      );
      const to = stack.callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Bye.' }] });
      const queued = await stack.place(agent.id, to);
      expect(queued.status).to.equal('queued');
      expect((await add(to)).status).to.equal(201);
      expect((await http(`/calls/${holder.id}/hangup`, { method: 'POST' })).status).to.equal(200);

      const ended = await until(
        () => stack.getCall(queued.id),
        (c) => c.status !== 'queued',
        60_000,
      );
      expect(ended).to.include({ status: 'canceled', hangup_reason: 'number on the do-not-call list', hangup_by: 'system' });
      const events = await stack.timeline(queued.id);
      expect(events.at(-1)).to.include({ type: 'call.ended', message: 'number on the do-not-call list', level: 'warning' });
      expect(events.map((e) => e.type)).not.to.include('call.placed');
      expect(simulated(to)).to.deep.equal([]);
    } finally {
      await Workspace.updateOne({ _id: stack.owner.workspaceId }, { $set: { concurrency_limit: null } });
    }
  });

  it('a batch marks a listed contact do_not_call, never dials it, and calls the others', async () => {
    const agent = await createAgent({ call: OPEN_HOURS });
    const [first, listedOne, last] = [1, 2, 3].map(() => stack.callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Bye.' }] }));
    expect((await add(listedOne)).status).to.equal(201);
    const batches = batchesClient(stack.api, stack.owner.auth);
    const { batch } = await createdBatch(stack.api, stack.owner.auth, `number,name\n${first},A\n${listedOne},B\n${last},C\n`, {
      agent_id: agent.id,
      from_number: await stack.providers.callerFor(stack.owner.workspaceId),
    });
    const done = await until(
      () => batches.get(batch.id),
      (b) => b.status === 'completed',
      90_000,
    );
    expect(done.counts).to.include({ completed: 2, do_not_call: 1, pending: 0, calling: 0 });
    const contacts = await batches.allContacts(batch.id);
    expect(contacts.map((c) => c.status)).to.deep.equal(['completed', 'do_not_call', 'completed']);
    expect(simulated(listedOne)).to.deep.equal([]);
    expect(simulated(first)).to.have.length(1);
    expect(simulated(last)).to.have.length(1);
    const filtered = await (await batches.contactsPage(batch.id, 'status=do_not_call')).json();
    expect(filtered.items.map((c: { number: string }) => c.number)).to.deep.equal([listedOne]);
  });

  describe('the opt-out tool', () => {
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await startWebhookReceiver();
    });
    after(async () => receiver?.close());

    it('"please don\'t call me again": the number is listed (opt_out), the confirmation is heard, the call ends, call.opted_out on the timeline and as a webhook', async () => {
      const agent = await createAgent({ welcome_message: 'Hello, this is Asha.', call: OPEN_HOURS, webhook_url: `${receiver.url}/hooks` });
      expect(agent.call).to.include({ opt_out: true, opt_out_message: '' });
      const to = stack.callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: "Please don't call me again." }] });
      const placed = await stack.place(agent.id, to);
      const { call, events } = await stack.finished(placed.id);

      expect(call).to.include({ status: 'completed', hangup_by: 'agent', hangup_reason: 'opted out' });
      const types = events.map((e) => e.type);
      expect(types.filter((t) => ['user.turn', 'tool.call', 'tool.result', 'call.opted_out', 'call.ended'].includes(t))).to.deep.equal([
        'user.turn',
        'tool.call',
        'tool.result',
        'call.opted_out',
        'call.ended',
      ]);
      const optedOut = events.find((e) => e.type === 'call.opted_out')!;
      expect(optedOut.data).to.deep.equal({ number: to, source: 'opt_out' });
      expect(events.find((e) => e.type === 'tool.call')!.data).to.include({ name: 'add_to_do_not_call' });

      const entry = (await listed()).find((e) => e.number === to);
      expect(entry).to.deep.include({ source: 'opt_out', added_by: `call:${placed.id}`, call_id: placed.id });
      const [leg] = simulated(to);
      expect(leg!.heard.map((h) => h.text).join(' ')).to.include('we will not call you again');

      const hooks = await until(
        async () => receiver.received.filter((r) => r.headers['x-service-event'] === 'call.opted_out'),
        (list) => list.length > 0,
        30_000,
      );
      expect(JSON.parse(hooks[0]!.rawBody)).to.deep.include({ type: 'call.opted_out', call_id: placed.id });

      // And the next call to the number is refused.
      const again = await http(
        '/calls',
        withJson('POST', { agent_id: agent.id, to_number: to, from_number: await stack.providers.callerFor(stack.owner.workspaceId) }),
      );
      expect(again.status).to.equal(422);
    });

    it('an agent with call.opt_out off does not offer the tool: the call goes on and nothing is listed', async () => {
      const agent = await createAgent({ call: { ...OPEN_HOURS, opt_out: false } });
      const to = stack.callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: "Please don't call me again." }, { say: 'Bye.' }] });
      const placed = await stack.place(agent.id, to);
      const { call, events } = await stack.finished(placed.id);
      expect(call.hangup_reason).not.to.equal('opted out');
      expect(events.map((e) => e.type)).not.to.include('call.opted_out');
      expect((await listed()).map((e) => e.number)).not.to.include(to);
    });
  });
});
