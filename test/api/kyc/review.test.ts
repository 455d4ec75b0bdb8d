import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { WorkflowHandle } from '@temporalio/client';
import { AuditEvent } from '../../../db/models/audit-event';
import { KycRecord } from '../../../db/models/kyc';
import { Workspace } from '../../../db/models/workspace';
import { approveSignal, rejectSignal, stateQuery, type KycReviewState } from '../../../contracts/kyc';
import { Kind, WorkspaceId } from '../../../contracts/search-attributes';
import { startApi, type RunningApi } from '../../support/api';
import { signUp, withJson, type SignedUp } from '../../support/accounts';
import { createLocal } from '../../support/servers';
import { FILES, readyToSubmit, upload, uploadRequest, validDetails } from './fixtures';
import { TEST_PAYLOAD_KEYS_ENV } from '../../support/payload-keys';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** Submission, the review workflow on the dev server with a real ops worker, and staff decisions. */
describe('KYC submission and review', () => {
  let api: RunningApi;
  before(async () => (api = await startApi({ workers: ['ops'] })));
  after(() => api.close());

  const submit = (owner: SignedUp) => api.request('/api/v1/kyc/submit', { method: 'POST', headers: owner.auth });
  const kyc = async (owner: SignedUp) => (await api.request('/api/v1/kyc', { headers: owner.auth })).json();
  const review = (owner: SignedUp): WorkflowHandle => createLocal().client.workflow.getHandle(`kyc-${owner.workspaceId}`);
  const workspaceStatus = async (owner: SignedUp) => {
    const me = await (await api.request('/api/v1/auth/me', { headers: owner.auth })).json();
    return me.workspaces.find((w: { id: string }) => w.id === owner.workspaceId).status;
  };
  /** Queries until the workflow has marked the record (its first activity). */
  const awaitingReview = async (handle: WorkflowHandle): Promise<KycReviewState> => {
    for (let i = 0; i < 100; i++) {
      const state = await handle.query(stateQuery);
      if (state.status === 'awaiting_review') return state;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the review never reached awaiting_review');
  };

  it('answers 409 naming what is missing before details and a document exist', async () => {
    const owner = await signUp(api);
    let res = await submit(owner);
    expect(res.status).to.equal(409);
    expect((await res.json()).detail)
      .to.include('PUT /kyc')
      .and.include('POST /kyc/documents');
    await api.request('/api/v1/kyc', withJson('PUT', validDetails(), owner.auth));
    res = await submit(owner);
    expect(res.status).to.equal(409);
    const { detail } = await res.json();
    expect(detail).to.include('upload at least one document').and.not.include('PUT /kyc');
    expect(await KycRecord.exists({ _id: owner.workspaceId, status: 'draft' })).not.to.equal(null);
  });

  it('submits: 202 submitted, the workflow awaits review with its search attributes, a second submit is 409, edits are 409', async () => {
    const owner = await signUp(api);
    await readyToSubmit(api, owner.auth);
    const res = await submit(owner);
    expect(res.status).to.equal(202);
    const body = await res.json();
    expect(body.status).to.equal('submitted');
    expect(body.submitted_at).to.match(/\+05:30$/);
    expect(body.details).to.deep.equal(validDetails());

    const handle = review(owner);
    const state = await awaitingReview(handle);
    expect(state).to.include({ workspaceId: owner.workspaceId, decidedBy: null, reason: null });
    expect(state.submittedBy).to.deep.equal({ id: owner.userId, name: 'Asha Rao' });
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(WorkspaceId)).to.equal(owner.workspaceId);
    expect(description.typedSearchAttributes.get(Kind)).to.equal('kyc');
    expect(description.taskQueue).to.equal('ops');

    const again = await submit(owner);
    expect(again.status).to.equal(409);
    expect((await again.json()).detail).to.include('already submitted');
    expect((await api.request('/api/v1/kyc', withJson('PUT', validDetails(), owner.auth))).status).to.equal(409);
    expect((await api.request('/api/v1/kyc/documents', uploadRequest(FILES.pdf, 'x.pdf', 'application/pdf', owner.auth))).status).to.equal(409);
    expect(await workspaceStatus(owner)).to.equal('onboarding');

    const audit = await AuditEvent.find({ workspace_id: owner.workspaceId, action: 'kyc.submitted' }).lean();
    expect(audit).to.have.lengthOf(1);
    expect(audit[0].actor).to.deep.include({ type: 'user', id: owner.userId, name: 'Asha Rao' });
    await handle.terminate('test cleanup');
  });

  it('approve {by} activates the workspace, records a staff audit event, and closes KYC for good', async () => {
    const owner = await signUp(api);
    await readyToSubmit(api, owner.auth);
    expect((await submit(owner)).status).to.equal(202);
    const handle = review(owner);
    await awaitingReview(handle);
    await handle.signal(approveSignal, { by: 'ops@example.com' });
    const result = (await handle.result()) as KycReviewState;
    expect(result).to.include({ status: 'approved', decidedBy: 'ops@example.com' });
    expect((await handle.query(stateQuery)).status, 'the query answers after the run closed too').to.equal('approved');

    expect(await workspaceStatus(owner)).to.equal('active');
    const workspace = await Workspace.findById(owner.workspaceId).lean();
    expect(workspace?.activated_at?.toISOString()).to.equal(result.decidedAt);
    const view = await kyc(owner);
    expect(view).to.include({ status: 'approved', rejection_reason: null });
    expect(Date.parse(view.decided_at)).to.equal(Date.parse(result.decidedAt as string));

    const [event] = await AuditEvent.find({ workspace_id: owner.workspaceId, action: 'kyc.approved' }).lean();
    expect(event.actor).to.deep.equal({ type: 'staff', id: null, name: 'ops@example.com' });
    const again = await submit(owner);
    expect(again.status).to.equal(409);
    expect((await again.json()).detail).to.include('already approved');
    expect((await api.request('/api/v1/kyc', withJson('PUT', validDetails(), owner.auth))).status).to.equal(409);
  });

  it('reject {by, reason} shows the reason and reopens editing; a resubmission is a new run; the npm script approves it', async () => {
    const owner = await signUp(api);
    await readyToSubmit(api, owner.auth);
    expect((await submit(owner)).status).to.equal(202);
    const handle = review(owner);
    const first = await awaitingReview(handle);
    await handle.signal(rejectSignal, { by: 'ops@example.com', reason: 'The PAN card scan is unreadable' });
    expect(await handle.result()).to.include({ status: 'rejected', reason: 'The PAN card scan is unreadable' });

    const view = await kyc(owner);
    expect(view).to.include({ status: 'rejected', rejection_reason: 'The PAN card scan is unreadable' });
    expect(view.decided_at).to.be.a('string');
    const [event] = await AuditEvent.find({ workspace_id: owner.workspaceId, action: 'kyc.rejected' }).lean();
    expect(event.actor).to.deep.equal({ type: 'staff', id: null, name: 'ops@example.com' });
    expect(event.details).to.include({ reason: 'The PAN card scan is unreadable' });

    // Editable again: new details and a clearer scan, then submit again.
    const edited = await api.request('/api/v1/kyc', withJson('PUT', { ...validDetails(), legal_name: 'Acme Voice Pvt Ltd' }, owner.auth));
    expect(edited.status).to.equal(200);
    expect((await edited.json()).rejection_reason, 'the reason stays until resubmission').to.equal('The PAN card scan is unreadable');
    await upload(api, owner.auth, FILES.png, 'pan-card.png', 'image/png');
    const resubmitted = await submit(owner);
    expect(resubmitted.status).to.equal(202);
    expect(await resubmitted.json()).to.include({ status: 'submitted', rejection_reason: null, decided_at: null });
    const second = await awaitingReview(review(owner));
    expect(second.submissionId).not.to.equal(first.submissionId);

    const { stdout } = await kycScript(['kyc:approve', '--', owner.workspaceId], { KYC_STAFF: 'reviewer@example.com' });
    expect(stdout).to.include(`sent approve to kyc-${owner.workspaceId} as reviewer@example.com`);
    expect(stdout).to.include('is approved');
    expect(await workspaceStatus(owner)).to.equal('active');
    expect((await kyc(owner)).details.legal_name).to.equal('Acme Voice Pvt Ltd');
    expect(await AuditEvent.countDocuments({ workspace_id: owner.workspaceId, action: 'kyc.submitted' })).to.equal(2);
  });

  it('a submission whose workflow was lost (terminated by ops) can be submitted again', async () => {
    const owner = await signUp(api);
    await readyToSubmit(api, owner.auth);
    expect((await submit(owner)).status).to.equal(202);
    await awaitingReview(review(owner));
    await review(owner).terminate('ops ended it by mistake');
    expect((await kyc(owner)).status).to.equal('submitted');
    const res = await submit(owner);
    expect(res.status).to.equal(202);
    await awaitingReview(review(owner));
    await review(owner).signal(approveSignal, { by: 'ops@example.com' });
    expect(await review(owner).result()).to.include({ status: 'approved' });
  });

  it('the npm scripts explain when there is nothing to decide, and reject needs a reason', async () => {
    const owner = await signUp(api);
    const missing = await kycScript(['kyc:approve', '--', owner.workspaceId]).catch((err) => err);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include(`workflow kyc-${owner.workspaceId} does not exist`);
    const noReason = await kycScript(['kyc:reject', '--', owner.workspaceId]).catch((err) => err);
    expect(noReason.code).to.equal(1);
    expect(noReason.stderr).to.include('reject needs a reason').and.include('usage:');
    const badId = await kycScript(['kyc:approve', '--', 'nope']).catch((err) => err);
    expect(badId.stderr).to.include('is not a workspace id');
  });
});

/** Runs `npm run <args>` as staff would, against the test's Temporal server. */
function kycScript(args: string[], env: Record<string, string> = {}) {
  const temporal = createLocal();
  return promisify(execFile)('npm', ['run', '--silent', ...args], {
    cwd: ROOT,
    // The tests' payload key, as staff's scripts carry the deployment's.
    env: { ...process.env, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace ?? 'default', ...TEST_PAYLOAD_KEYS_ENV, ...env },
    timeout: 60_000,
  });
}
