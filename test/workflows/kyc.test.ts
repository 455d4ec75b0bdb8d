import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { createActivities, systemClock } from '../../activities';
import { newId } from '../../db/ids';
import { AuditEvent } from '../../db/models/audit-event';
import { KycRecord } from '../../db/models/kyc';
import { Workspace } from '../../db/models/workspace';
import { createKycActivities } from '../../activities/kyc';
import { kycReviewWorkflow } from '../../workflows/kyc';
import { approveSignal, rejectSignal, stateQuery, type KycReviewInput } from '../../contracts/kyc';
import { createLocal, workflowBundle } from '../support/servers';

/** A workspace in onboarding with a draft KYC record, as the API leaves it before submission. */
async function draftWorkspace(): Promise<string> {
  const id = newId();
  const now = new Date();
  await Workspace.create({ _id: id, name: 'Review test', status: 'onboarding', created_by: newId(), created_at: now, updated_at: now });
  await KycRecord.create({ _id: id, status: 'draft' });
  return id;
}

function reviewInput(workspaceId: string): KycReviewInput {
  return { workspaceId, submissionId: newId(), submittedBy: { id: newId(), name: 'Asha Rao' }, ip: '127.0.0.1' };
}

describe('kycReviewWorkflow on the dev server', () => {
  it('ignores malformed signals, takes the first valid decision, and ignores later ones', async () => {
    const env = createLocal();
    // A task queue of its own, and signals sent before the worker runs: the order is fixed.
    const taskQueue = `kyc-test-${randomBytes(4).toString('hex')}`;
    const workspaceId = await draftWorkspace();
    const handle = await env.client.workflow.start(kycReviewWorkflow, { taskQueue, workflowId: `kyc-${workspaceId}`, args: [reviewInput(workspaceId)] });
    await handle.signal(rejectSignal, { by: 'ops@example.com', reason: '   ' });
    await handle.signal(approveSignal, { by: '' });
    await handle.signal(approveSignal, { by: ' ops@example.com ' });
    await handle.signal(rejectSignal, { by: 'someone-else', reason: 'too late' });

    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities({ clock: systemClock }),
    });
    const result = await worker.runUntil(handle.result());
    expect(result).to.include({ status: 'approved', decidedBy: 'ops@example.com', reason: null });
    expect((await Workspace.findById(workspaceId).lean())?.status).to.equal('active');
    expect(await AuditEvent.countDocuments({ workspace_id: workspaceId, action: { $in: ['kyc.approved', 'kyc.rejected'] } })).to.equal(1);
  });

  it('answers the query while it waits', async () => {
    const env = createLocal();
    const taskQueue = `kyc-test-${randomBytes(4).toString('hex')}`;
    const workspaceId = await draftWorkspace();
    const input = reviewInput(workspaceId);
    const handle = await env.client.workflow.start(kycReviewWorkflow, { taskQueue, workflowId: `kyc-${workspaceId}`, args: [input] });
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities({ clock: systemClock }),
    });
    await worker.runUntil(async () => {
      let state = await handle.query(stateQuery);
      for (let i = 0; i < 100 && state.status !== 'awaiting_review'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        state = await handle.query(stateQuery);
      }
      expect(state).to.deep.equal({
        workspaceId,
        submissionId: input.submissionId,
        status: 'awaiting_review',
        submittedBy: input.submittedBy,
        decidedBy: null,
        reason: null,
        decidedAt: null,
      });
      expect((await KycRecord.findById(workspaceId).lean())?.submission_id).to.equal(input.submissionId);
      await handle.signal(rejectSignal, { by: 'ops@example.com', reason: 'blurred scan' });
      expect(await handle.result()).to.include({ status: 'rejected', reason: 'blurred scan' });
    });
  });
});

describe('KYC activities', () => {
  const activities = createKycActivities({ clock: systemClock });

  it('are idempotent: a retried submission or approval changes nothing and audits once', async () => {
    const workspaceId = await draftWorkspace();
    const input = reviewInput(workspaceId);
    await activities.markKycSubmitted(input);
    const submittedAt = (await KycRecord.findById(workspaceId).lean())?.submitted_at;
    await activities.markKycSubmitted(input);
    expect((await KycRecord.findById(workspaceId).lean())?.submitted_at?.getTime()).to.equal(submittedAt?.getTime());

    const decision = { workspaceId, submissionId: input.submissionId, by: 'ops@example.com' };
    const first = await activities.approveKyc(decision);
    const retried = await activities.approveKyc(decision);
    expect(retried.decidedAt).to.equal(first.decidedAt);
    for (const action of ['kyc.submitted', 'kyc.approved']) {
      expect(await AuditEvent.countDocuments({ workspace_id: workspaceId, action }), action).to.equal(1);
    }
  });

  it('never let a stale submission decide the record, nor submit an approved one', async () => {
    const workspaceId = await draftWorkspace();
    const input = reviewInput(workspaceId);
    await activities.markKycSubmitted(input);
    const stale = activities.rejectKyc({ workspaceId, submissionId: newId(), by: 'ops@example.com', reason: 'x' });
    const failure = await stale.catch((err: unknown) => err);
    expect(failure).to.be.instanceOf(ApplicationFailure);
    expect(failure).to.include({ type: 'KycNotSubmitted', nonRetryable: true });

    await activities.approveKyc({ workspaceId, submissionId: input.submissionId, by: 'ops@example.com' });
    const resubmit = await activities.markKycSubmitted(reviewInput(workspaceId)).catch((err: unknown) => err);
    expect(resubmit).to.include({ type: 'KycNotSubmittable', nonRetryable: true });
    expect((await KycRecord.findById(workspaceId).lean())?.status).to.equal('approved');
  });
});
