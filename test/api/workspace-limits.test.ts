import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { createSlotActivities } from '../../activities/calls/slots';
import { approveLimitRequest, LimitDecisionError, rejectLimitRequest, setConcurrencyLimit, type StaffDeps } from '../../domain/calls/limit-requests';
import { newId } from '../../db/ids';
import { followCallStatus, openCall, OPEN_CALL_LONGEST_MS } from '../../domain/calls/open-calls';
import { createQueuedCall } from '../../domain/calls/place-call';
import { writeCallChanges } from '../../domain/calls/queue';
import { AuditEvent } from '../../db/models/audit-event';
import { Call, type CallStatus } from '../../db/models/call';
import { LimitRequest, OpenLimitRequest } from '../../db/models/limit-request';
import { Workspace } from '../../db/models/workspace';
import { slotKeeperId, slotsStateQuery } from '../../contracts/slots';
import type { slotKeeperWorkflow } from '../../workflows/slots';
import { startApi, type ApiResponse, type RunningApi } from '../support/api';
import { apiKeyFor, memberWithRole, signUp, withJson } from '../support/accounts';
import { createLocal, testServers, workflowBundle } from '../support/servers';
import { TEST_PAYLOAD_KEYS_ENV } from '../support/payload-keys';

type Headers = Record<string, string>;

const ROOT = path.resolve(__dirname, '..', '..');
const REQUEST_FIELDS = ['concurrency_limit', 'created_at', 'decided_at', 'decided_by', 'decision_note', 'id', 'reason', 'requested_by', 'status'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The workspace's call limits and limit requests (contract, "Workspace" and "Limits"):
 * GET /workspace/limits, GET and POST /workspace/limits/requests, and the staff decisions of
 * scripts/limits.ts. Real API over HTTP, real database, real Temporal (and a real slot keeper
 * where a decision must reach one). Workspaces stay onboarding: limits work before activation.
 */
describe('workspace call limits and limit requests', () => {
  let api: RunningApi;
  let staffDeps: StaffDeps;

  before(async () => {
    api = await startApi();
    staffDeps = { temporal: createLocal().client };
  });
  after(() => api.close());

  /** A new (onboarding) workspace and its owner's headers. */
  async function freshWorkspace(): Promise<{ workspaceId: string; headers: Headers }> {
    const owner = await signUp(api, { name: 'Asha Rao' });
    return { workspaceId: owner.workspaceId, headers: { ...owner.auth, 'X-Workspace-ID': owner.workspaceId } };
  }

  const limits = async (headers: Headers) => {
    const res = await api.request('/api/v1/workspace/limits', { headers });
    expect(res.status, await res.clone().text()).to.equal(200);
    return res.json();
  };
  const requests = async (headers: Headers) => {
    const res = await api.request('/api/v1/workspace/limits/requests', { headers });
    expect(res.status, await res.clone().text()).to.equal(200);
    return res.json();
  };
  const ask = (headers: Headers, body: unknown) => api.request('/api/v1/workspace/limits/requests', withJson('POST', body, headers));
  const asked = async (headers: Headers, body: Record<string, unknown> = {}) => {
    const res = await ask(headers, { concurrency_limit: 20, reason: 'Diwali campaign: 40,000 reminder calls', ...body });
    expect(res.status, await res.clone().text()).to.equal(201);
    return res.json();
  };

  /** Call records with these statuses, each with its entry among the calls not yet ended, as placing a call and following its status make them. */
  async function addCalls(workspaceId: string, statuses: CallStatus[]): Promise<void> {
    const now = new Date();
    const ids = statuses.map(() => newId());
    for (const [i, status] of statuses.entries()) {
      await openCall(ids[i]!, workspaceId, 'queued', now);
      await followCallStatus(ids[i]!, status);
    }
    await Call.insertMany(
      statuses.map((status, i) => ({
        _id: ids[i]!,
        workspace_id: workspaceId,
        agent_id: newId(),
        agent_name: 'Reminder agent',
        direction: 'outbound',
        to_number: '+919800000001',
        from_number: '+918000000001',
        status,
        created_at: now,
        updated_at: now,
      })),
    );
  }

  async function expectIssue(res: ApiResponse, loc: (string | number)[], type?: string) {
    const text = await res.clone().text();
    expect(res.status, text).to.equal(422);
    const { detail } = await res.json();
    expect(
      detail.map((issue: { loc: unknown }) => issue.loc),
      text,
    ).to.deep.include(loc);
    if (type) expect(detail.find((issue: { loc: unknown[] }) => issue.loc.join('.') === loc.join('.')).type, text).to.equal(type);
  }

  describe('GET /workspace/limits', () => {
    it('shows the plan limit, no calls and no request for a new workspace, while it is onboarding', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      expect((await Workspace.findById(workspaceId).lean())?.status).to.equal('onboarding');
      expect(await limits(headers)).to.deep.equal({ concurrency_limit: 5, active_calls: 0, queued_calls: 0, pending_request: null });
    });

    it('counts ringing and in-progress calls as active and queued calls as queued, in this workspace only', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const other = await freshWorkspace();
      await addCalls(workspaceId, [
        'ringing',
        'ringing',
        'in-progress',
        'queued',
        'queued',
        'queued',
        'queued',
        'completed',
        'no-answer',
        'busy',
        'failed',
        'canceled',
      ]);
      await addCalls(other.workspaceId, ['in-progress', 'queued']);
      expect(await limits(headers)).to.include({ concurrency_limit: 5, active_calls: 3, queued_calls: 4 });
      expect(await limits(other.headers)).to.include({ active_calls: 1, queued_calls: 1 });
    });

    it('follows a placed call from queued to live to ended, counts a placement retried once, and stops counting an entry older than any call stays open', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const placed = {
        callId: newId(),
        workspaceId,
        agent: { _id: newId(), name: 'Reminder agent' },
        toNumber: '+919800000001',
        fromNumber: '+918000000001',
        userData: {},
        placedBy: 'key:test',
        at: new Date(),
      };
      await createQueuedCall(placed);
      await createQueuedCall(placed);
      expect(await limits(headers)).to.include({ active_calls: 0, queued_calls: 1 });
      await writeCallChanges(placed.callId, { dequeued_at: new Date().toISOString() }, new Date());
      expect(await limits(headers), 'dequeued, waiting for its dial').to.include({ active_calls: 0, queued_calls: 1 });
      await writeCallChanges(placed.callId, { status: 'ringing' }, new Date());
      expect(await limits(headers)).to.include({ active_calls: 1, queued_calls: 0 });
      await writeCallChanges(placed.callId, { status: 'in-progress' }, new Date());
      expect(await limits(headers)).to.include({ active_calls: 1, queued_calls: 0 });
      await writeCallChanges(placed.callId, { status: 'completed' }, new Date());
      expect(await limits(headers)).to.include({ active_calls: 0, queued_calls: 0 });

      // Left behind (a workflow terminated by an operator): counted until no call could still be open.
      await openCall(newId(), workspaceId, 'in-progress', new Date(Date.now() - OPEN_CALL_LONGEST_MS + 60_000));
      await openCall(newId(), workspaceId, 'queued', new Date(Date.now() - OPEN_CALL_LONGEST_MS - 60_000));
      expect(await limits(headers)).to.include({ active_calls: 1, queued_calls: 0 });
    });

    it('shows the limit staff set and the plan of the workspace', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      await Workspace.updateOne({ _id: workspaceId }, { $set: { plan: 'growth' } });
      expect((await limits(headers)).concurrency_limit).to.equal(20);
      await Workspace.updateOne({ _id: workspaceId }, { $set: { concurrency_limit: 7 } });
      expect((await limits(headers)).concurrency_limit).to.equal(7);
    });

    it('answers API keys and viewers (agents.view), and shows the open request', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const opened = await asked(headers);
      const key = await apiKeyFor(workspaceId);
      const viewer = await memberWithRole(api, workspaceId, 'viewer');
      for (const h of [key.headers, viewer.headers]) {
        expect((await limits(h)).pending_request).to.deep.equal(opened);
      }
    });
  });

  describe('POST /workspace/limits/requests', () => {
    it('opens a pending request for the owner (201) and audits limits.requested', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const before = Date.now();
      const request = await asked(headers, { concurrency_limit: 40, reason: '  Festival season  ' });
      expect(request).to.have.all.keys(REQUEST_FIELDS);
      expect(request).to.include({
        concurrency_limit: 40,
        reason: 'Festival season',
        status: 'pending',
        requested_by: 'Asha Rao',
        decided_at: null,
        decided_by: null,
        decision_note: null,
      });
      expect(request.id).to.match(/^[0-9a-f]{32}$/);
      expect(request.created_at).to.match(/\+05:30$/);
      expect(new Date(request.created_at).getTime()).to.be.within(before - 1000, Date.now() + 1000);
      const audit = await AuditEvent.findOne({ workspace_id: workspaceId, action: 'limits.requested' }).lean();
      expect(audit).to.deep.include({ target: { type: 'limit_request', id: request.id, name: null }, details: { concurrency_limit: 40 } });
      expect(audit?.actor).to.include({ type: 'user', name: 'Asha Rao' });
    });

    it('lets an admin ask (201), not a developer or a viewer (403 naming members.manage), not an API key (403, session only)', async () => {
      const { workspaceId } = await freshWorkspace();
      for (const role of ['developer', 'viewer'] as const) {
        const member = await memberWithRole(api, workspaceId, role);
        const res = await ask(member.headers, { concurrency_limit: 20, reason: 'more calls' });
        expect(res.status, role).to.equal(403);
        expect(await res.json()).to.include({ permission: 'members.manage' });
      }
      const key = await apiKeyFor(workspaceId);
      const keyed = await ask(key.headers, { concurrency_limit: 20, reason: 'more calls' });
      expect(keyed.status).to.equal(403);
      expect((await keyed.json()).detail).to.match(/signed-in user session/);
      expect(await LimitRequest.countDocuments({ workspace_id: workspaceId })).to.equal(0);

      const admin = await memberWithRole(api, workspaceId, 'admin');
      expect(await asked(admin.headers, { concurrency_limit: 10 })).to.include({ status: 'pending', requested_by: 'admin person', concurrency_limit: 10 });
    });

    it('refuses a second open request (409) naming the open one', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const first = await asked(headers);
      const res = await ask(headers, { concurrency_limit: 30, reason: 'even more' });
      expect(res.status).to.equal(409);
      expect((await res.json()).detail)
        .to.include(first.id)
        .and.include('already open');
      expect(await LimitRequest.countDocuments({ workspace_id: workspaceId })).to.equal(1);
    });

    it('opens exactly one of 10 parallel requests', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => ask(headers, { concurrency_limit: 10 + i, reason: `parallel ${i}` })));
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses).to.deep.equal([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
      const stored = await LimitRequest.find({ workspace_id: workspaceId }).lean();
      expect(stored).to.have.lengthOf(1);
      const opened = await answers.find((res) => res.status === 201)!.json();
      expect(stored[0]._id).to.equal(opened.id);
      expect((await limits(headers)).pending_request.id).to.equal(opened.id);
    });

    it('refuses the limit already in force (409): the body is valid, the state makes it pointless', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const res = await ask(headers, { concurrency_limit: 5, reason: 'same again' });
      expect(res.status).to.equal(409);
      expect((await res.json()).detail).to.include('already 5');
      expect(await LimitRequest.countDocuments({ workspace_id: workspaceId })).to.equal(0);
      expect(await OpenLimitRequest.findById(workspaceId).lean()).to.equal(null);
    });

    it('validates the body (422): a limit from 1 to 100, a whole number, and a reason of 1 to 500 characters', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      await expectIssue(await ask(headers, { concurrency_limit: 0, reason: 'x' }), ['body', 'concurrency_limit'], 'greater_than_equal');
      await expectIssue(await ask(headers, { concurrency_limit: 101, reason: 'x' }), ['body', 'concurrency_limit'], 'less_than_equal');
      await expectIssue(await ask(headers, { concurrency_limit: 2.5, reason: 'x' }), ['body', 'concurrency_limit']);
      await expectIssue(await ask(headers, { concurrency_limit: '20', reason: 'x' }), ['body', 'concurrency_limit']);
      await expectIssue(await ask(headers, { concurrency_limit: 20 }), ['body', 'reason']);
      await expectIssue(await ask(headers, { reason: 'x' }), ['body', 'concurrency_limit']);
      await expectIssue(await ask(headers, { concurrency_limit: 20, reason: '' }), ['body', 'reason']);
      await expectIssue(await ask(headers, { concurrency_limit: 20, reason: '   ' }), ['body', 'reason'], 'string_pattern_mismatch');
      await expectIssue(await ask(headers, { concurrency_limit: 20, reason: 'x'.repeat(501) }), ['body', 'reason']);
      await expectIssue(await ask(headers, { concurrency_limit: 20, reason: 'x', limit: 20 }), ['body', 'limit']);
      expect(await LimitRequest.countDocuments({ workspace_id: workspaceId })).to.equal(0);
      expect(await asked(headers, { concurrency_limit: 100, reason: 'x'.repeat(500) })).to.include({ concurrency_limit: 100 });
    });

    it('clears a marker its request never joined (an API that died) once it is a minute old, not before', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      await OpenLimitRequest.create({ _id: workspaceId, request_id: newId(), created_at: new Date(Date.now() - 10_000) });
      expect((await ask(headers, { concurrency_limit: 20, reason: 'x' })).status).to.equal(409);
      await OpenLimitRequest.updateOne({ _id: workspaceId }, { $set: { created_at: new Date(Date.now() - 120_000) } });
      const opened = await asked(headers);
      expect((await OpenLimitRequest.findById(workspaceId).lean())?.request_id).to.equal(opened.id);
    });

    it('clears a marker whose request was decided (a decision that died before closing it)', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const first = await asked(headers);
      await LimitRequest.updateOne({ _id: first.id }, { $set: { status: 'rejected', decided_at: new Date(), decided_by: 'ops', decision_note: 'no' } });
      expect((await OpenLimitRequest.findById(workspaceId).lean())?.request_id).to.equal(first.id);
      expect((await limits(headers)).pending_request).to.equal(null);
      const second = await asked(headers);
      expect(second.id).not.to.equal(first.id);
    });
  });

  describe('GET /workspace/limits/requests', () => {
    it('lists the last 50 requests newest first, to any member and to API keys', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const start = Date.now() - 3600_000;
      await LimitRequest.insertMany(
        Array.from({ length: 55 }, (_, i) => ({
          _id: newId(),
          workspace_id: workspaceId,
          concurrency_limit: 10 + i,
          reason: `request ${i}`,
          status: 'rejected',
          requested_by: { user_id: null, name: 'Asha Rao' },
          created_at: new Date(start + i * 1000),
          decided_at: new Date(start + i * 1000 + 500),
          decided_by: 'ops',
          decision_note: `not now ${i}`,
        })),
      );
      const latest = await asked(headers, { concurrency_limit: 99 });
      const listed = await requests(headers);
      expect(listed).to.have.lengthOf(50);
      expect(listed[0]).to.deep.equal(latest);
      expect(listed.slice(1).map((r: { reason: string }) => r.reason)).to.deep.equal(Array.from({ length: 49 }, (_, i) => `request ${54 - i}`));
      expect(listed[1]).to.have.all.keys(REQUEST_FIELDS);
      expect(listed[1]).to.include({ status: 'rejected', decided_by: 'ops', decision_note: 'not now 54', requested_by: 'Asha Rao' });

      const viewer = await memberWithRole(api, workspaceId, 'viewer');
      const key = await apiKeyFor(workspaceId);
      expect((await requests(viewer.headers)).map((r: { id: string }) => r.id)).to.deep.equal(listed.map((r: { id: string }) => r.id));
      expect(await requests(key.headers)).to.have.lengthOf(50);
      expect(await requests((await freshWorkspace()).headers)).to.deep.equal([]);
    });
  });

  describe('staff decisions (domain/calls/limit-requests.ts)', () => {
    it('approving sets the limit GET shows, marks the request approved, audits it, and lets a new request open', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const request = await asked(headers, { concurrency_limit: 30 });
      const at = new Date();
      const { limit, keeper } = await approveLimitRequest(staffDeps, { requestId: request.id, by: 'ops@example.com', at });
      expect(limit).to.equal(30);
      expect(keeper).to.equal('not_running');
      expect(await limits(headers)).to.deep.equal({ concurrency_limit: 30, active_calls: 0, queued_calls: 0, pending_request: null });
      expect((await Workspace.findById(workspaceId).lean())?.concurrency_limit).to.equal(30);
      const [listed] = await requests(headers);
      expect(listed).to.include({ id: request.id, status: 'approved', decided_by: 'ops@example.com', decision_note: null });
      expect(new Date(listed.decided_at).getTime()).to.equal(at.getTime());
      const audit = await AuditEvent.findOne({ workspace_id: workspaceId, action: 'limits.approved' }).lean();
      expect(audit).to.deep.include({ actor: { type: 'staff', id: null, name: 'ops@example.com' }, details: { requested: 30, from: 5, to: 30 } });

      const next = await asked(headers, { concurrency_limit: 50 });
      expect((await limits(headers)).pending_request.id).to.equal(next.id);
      // The limit in force is now 30: asking for it again is pointless.
      await rejectLimitRequest({ requestId: next.id, note: 'not yet', by: 'ops', at: new Date() });
      expect((await ask(headers, { concurrency_limit: 30, reason: 'x' })).status).to.equal(409);
    });

    it('approving with another limit grants that one and says so in the note', async () => {
      const { headers } = await freshWorkspace();
      const request = await asked(headers, { concurrency_limit: 80 });
      const { request: decided, limit } = await approveLimitRequest(staffDeps, { requestId: request.id, limit: 25, by: 'ops', at: new Date() });
      expect(limit).to.equal(25);
      expect(decided).to.include({ status: 'approved', concurrency_limit: 80, decision_note: 'approved with a limit of 25 instead of 80' });
      expect((await limits(headers)).concurrency_limit).to.equal(25);
    });

    it('rejecting keeps the limit, shows the note, audits it, and lets a new request open', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const request = await asked(headers, { concurrency_limit: 60 });
      await rejectLimitRequest({ requestId: request.id, note: '  Complete KYC first  ', by: 'ops', at: new Date() });
      expect(await limits(headers)).to.deep.equal({ concurrency_limit: 5, active_calls: 0, queued_calls: 0, pending_request: null });
      expect((await Workspace.findById(workspaceId).lean())?.concurrency_limit).to.equal(null);
      expect((await requests(headers))[0]).to.include({ status: 'rejected', decided_by: 'ops', decision_note: 'Complete KYC first' });
      expect(await AuditEvent.findOne({ workspace_id: workspaceId, action: 'limits.rejected' }).lean()).to.deep.include({
        details: { requested: 60, note: 'Complete KYC first' },
      });
      await asked(headers);
    });

    it('refuses to decide twice, an unknown request, a rejection without a note, and a limit out of range', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const request = await asked(headers);
      const refused = (promise: Promise<unknown>) =>
        promise.then(
          () => expect.fail('decided'),
          (err: Error) => err,
        );
      expect(await refused(rejectLimitRequest({ requestId: request.id, note: '  ', by: 'ops', at: new Date() }))).to.be.instanceOf(LimitDecisionError);
      for (const limit of [0, 1001, 2.5]) {
        expect((await refused(approveLimitRequest(staffDeps, { requestId: request.id, limit, by: 'ops', at: new Date() }))).message).to.include(
          'whole number from 1 to 1000',
        );
      }
      expect((await Workspace.findById(workspaceId).lean())?.concurrency_limit).to.equal(null);
      await approveLimitRequest(staffDeps, { requestId: request.id, by: 'ops', at: new Date() });
      expect((await refused(approveLimitRequest(staffDeps, { requestId: request.id, by: 'ops', at: new Date() }))).message).to.include(
        'is already approved (by ops at',
      );
      expect((await refused(rejectLimitRequest({ requestId: request.id, note: 'no', by: 'ops', at: new Date() }))).message).to.include('already approved');
      expect((await refused(approveLimitRequest(staffDeps, { requestId: newId(), by: 'ops', at: new Date() }))).message).to.include('no limit request');
      expect(await AuditEvent.countDocuments({ workspace_id: workspaceId, action: { $in: ['limits.approved', 'limits.rejected'] } })).to.equal(1);
    });

    it('setting a limit directly changes it without touching an open request; "plan" goes back to the plan\'s', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const request = await asked(headers);
      expect(await setConcurrencyLimit(staffDeps, { workspaceId, limit: 12, by: 'ops', at: new Date() })).to.deep.equal({ limit: 12, keeper: 'not_running' });
      expect(await limits(headers)).to.deep.include({ concurrency_limit: 12 });
      expect((await limits(headers)).pending_request.id).to.equal(request.id);
      expect(await setConcurrencyLimit(staffDeps, { workspaceId, limit: null, by: 'ops', at: new Date() })).to.deep.equal({ limit: 5, keeper: 'not_running' });
      expect((await limits(headers)).concurrency_limit).to.equal(5);
      const audits = await AuditEvent.find({ workspace_id: workspaceId, action: 'limits.set' }).sort({ at: 1 }).lean();
      expect(audits.map((a) => a.details)).to.deep.equal([
        { from: 5, to: 12, plan_limit: false },
        { from: 12, to: 5, plan_limit: true },
      ]);
      const refused = await setConcurrencyLimit(staffDeps, { workspaceId: newId(), limit: 3, by: 'ops', at: new Date() }).catch((err: Error) => err);
      expect(refused).to.be.instanceOf(LimitDecisionError).with.property('message').that.includes('no workspace');
    });

    describe('with a running slot keeper', () => {
      const taskQueue = `limits-test-${newId()}`;
      let worker: Worker;
      let running: Promise<void>;
      const keepers: WorkflowHandle[] = [];

      before(async () => {
        const env = createLocal();
        // The keeper needs only its own activity (it reads the workspace's limit when it starts).
        worker = await Worker.create({
          connection: env.nativeConnection,
          namespace: env.namespace ?? 'default',
          taskQueue,
          workflowBundle: await workflowBundle(),
          activities: createSlotActivities({ temporal: env.client }),
        });
        running = worker.run();
      });
      after(async () => {
        await Promise.all(keepers.map((handle) => handle.terminate('test over').catch(() => undefined)));
        worker.shutdown();
        await running;
      });

      async function startKeeper(workspaceId: string): Promise<WorkflowHandle<typeof slotKeeperWorkflow>> {
        const handle = await staffDeps.temporal.workflow.start<typeof slotKeeperWorkflow>('slotKeeperWorkflow', {
          taskQueue,
          workflowId: slotKeeperId(workspaceId),
          args: [{ workspaceId }],
        });
        keepers.push(handle);
        return handle;
      }

      async function keeperLimit(handle: WorkflowHandle<typeof slotKeeperWorkflow>, expected: number): Promise<number | null> {
        let limit: number | null = null;
        for (let i = 0; i < 100 && limit !== expected; i++) {
          limit = (await handle.query(slotsStateQuery)).limit;
          if (limit !== expected) await sleep(100);
        }
        return limit;
      }

      it('approving and setting tell the keeper the new limit at once', async () => {
        const { headers, workspaceId } = await freshWorkspace();
        const keeper = await startKeeper(workspaceId);
        expect(await keeperLimit(keeper, 5)).to.equal(5);
        const request = await asked(headers, { concurrency_limit: 42 });
        expect((await approveLimitRequest(staffDeps, { requestId: request.id, by: 'ops', at: new Date() })).keeper).to.equal('signalled');
        expect(await keeperLimit(keeper, 42)).to.equal(42);
        expect((await setConcurrencyLimit(staffDeps, { workspaceId, limit: null, by: 'ops', at: new Date() })).keeper).to.equal('signalled');
        expect(await keeperLimit(keeper, 5)).to.equal(5);
      });

      it('a keeper started after the approval reads the approved limit from the workspace', async () => {
        const { headers, workspaceId } = await freshWorkspace();
        const request = await asked(headers, { concurrency_limit: 17 });
        expect((await approveLimitRequest(staffDeps, { requestId: request.id, by: 'ops', at: new Date() })).keeper).to.equal('not_running');
        expect(await keeperLimit(await startKeeper(workspaceId), 17)).to.equal(17);
      });
    });
  });

  describe('the npm scripts', () => {
    /** Runs `npm run <args>` as staff would, against the test's database and Temporal server. */
    function limitsScript(args: string[]) {
      const temporal = createLocal();
      return promisify(execFile)('npm', ['run', '--silent', ...args], {
        cwd: ROOT,
        env: {
          ...process.env,
          MONGODB_URI: testServers().mongodbUri,
          TEMPORAL_ADDRESS: temporal.address,
          TEMPORAL_NAMESPACE: temporal.namespace ?? 'default',
          LIMITS_STAFF: 'ops@example.com',
          ...TEST_PAYLOAD_KEYS_ENV,
        },
        timeout: 60_000,
      });
    }

    it('limits:approve, limits:reject and limits:set decide and print the outcome', async () => {
      const { headers, workspaceId } = await freshWorkspace();
      const first = await asked(headers, { concurrency_limit: 33 });
      const approved = await limitsScript(['limits:approve', '--', first.id]);
      expect(approved.stdout).to.include(`approved limit request ${first.id} as ops@example.com`).and.include('may now run 33 calls');
      expect((await limits(headers)).concurrency_limit).to.equal(33);

      const second = await asked(headers, { concurrency_limit: 90 });
      const rejected = await limitsScript(['limits:reject', '--', second.id, 'Send', 'your traffic forecast']);
      expect(rejected.stdout).to.include(`rejected limit request ${second.id}`);
      expect((await requests(headers))[0]).to.include({ status: 'rejected', decision_note: 'Send your traffic forecast', decided_by: 'ops@example.com' });

      const set = await limitsScript(['limits:set', '--', workspaceId, '8']);
      expect(set.stdout).to.include(`workspace ${workspaceId} may now run 8 calls at once`);
      expect((await limits(headers)).concurrency_limit).to.equal(8);
    });

    it('explain what is wrong with a command, and refuse a request already decided', async function () {
      this.timeout(120_000);
      const { headers } = await freshWorkspace();
      const request = await asked(headers);
      const failed = (args: string[]) =>
        limitsScript(args).then(
          () => expect.fail('succeeded'),
          (err: { code: number; stderr: string }) => err,
        );
      const noNote = await failed(['limits:reject', '--', request.id]);
      expect(noNote.code).to.equal(1);
      expect(noNote.stderr).to.include('reject needs a note').and.include('usage:');
      expect((await failed(['limits:approve', '--', 'nope'])).stderr).to.include('is not a limit request id');
      expect((await failed(['limits:set', '--', newId(), 'lots'])).stderr).to.include('is not a limit');
      await rejectLimitRequest({ requestId: request.id, note: 'no', by: 'ops', at: new Date() });
      expect((await failed(['limits:approve', '--', request.id])).stderr).to.include(`limit request ${request.id} is already rejected`);
    });
  });
});
