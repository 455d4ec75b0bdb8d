import { expect } from 'chai';
import type { WorkflowHandle } from '@temporalio/client';
import { approveSignal, rejectSignal, stateQuery, type KycReviewState } from '../../../contracts/kyc';
import { kycDocumentRetentionWorkflowId } from '../../../contracts/privacy';
import { KycDocument } from '../../../db/models/kyc';
import { startApi, type RunningApi } from '../../support/api';
import { signUp, type SignedUp } from '../../support/accounts';
import { createLocal } from '../../support/servers';
import { until } from '../../support/until';
import { readyToSubmit } from './fixtures';

const RETENTION_SECONDS = 2;

/**
 * KYC documents kept only the stated period after the decision (docs/decisions/0211), here 2
 * seconds, with a real ops worker on the dev server: the review starts a timer of its own
 * (`kyc-documents-<submission>`) and still ends at the decision; when the timer fires the
 * documents' bytes go and what they were stays.
 */
describe('KYC documents after the decision', function () {
  this.timeout(90_000);
  let api: RunningApi;
  before(async () => {
    api = await startApi({ workers: ['ops'], privacy: { workspaceClosureGraceSeconds: 30 * 86_400, kycDocumentRetentionSeconds: RETENTION_SECONDS } });
  });
  after(() => api.close());

  const submit = (owner: SignedUp) => api.request('/api/v1/kyc/submit', { method: 'POST', headers: owner.auth });
  const kyc = async (owner: SignedUp) => (await api.request('/api/v1/kyc', { headers: owner.auth })).json();
  const review = (owner: SignedUp): WorkflowHandle => createLocal().client.workflow.getHandle(`kyc-${owner.workspaceId}`);
  const awaitingReview = async (handle: WorkflowHandle): Promise<KycReviewState> => {
    for (let i = 0; i < 100; i++) {
      const state = await handle.query(stateQuery);
      if (state.status === 'awaiting_review') return state;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the review never reached awaiting_review');
  };

  it('approved: the review ends at the decision; after the period the files are erased, their description and the decision kept', async () => {
    const owner = await signUp(api);
    await readyToSubmit(api, owner.auth);
    expect((await submit(owner)).status).to.equal(202);
    const handle = review(owner);
    const { submissionId } = await awaitingReview(handle);
    await handle.signal(approveSignal, { by: 'ops@example.com' });
    const decided = (await handle.result()) as KycReviewState;
    expect(decided.status).to.equal('approved');

    const before = await kyc(owner);
    expect(before.documents).to.have.lengthOf(1);
    const [document] = before.documents;
    expect(document.erased_at).to.equal(null);
    expect((await api.request(`/api/v1/kyc/documents/${document.id}`, { headers: owner.auth })).status).to.equal(200);

    const retention = await createLocal().client.workflow.getHandle(kycDocumentRetentionWorkflowId(submissionId)).result();
    expect(retention).to.deep.equal({ erased: 1 });
    const after = await kyc(owner);
    expect(after).to.include({ status: 'approved' });
    expect(Date.parse(after.decided_at)).to.equal(Date.parse(decided.decidedAt!));
    const [erased] = after.documents;
    expect(erased).to.deep.include({ id: document.id, filename: document.filename, content_type: document.content_type, size_bytes: document.size_bytes });
    expect(Date.parse(erased.erased_at) - Date.parse(decided.decidedAt!)).to.be.at.least(RETENTION_SECONDS * 1000);
    const read = await api.request(`/api/v1/kyc/documents/${document.id}`, { headers: owner.auth });
    expect(read.status).to.equal(404);
    expect((await read.json()).detail).to.include('erased');
    expect((await KycDocument.findById(document.id).lean())?.data).to.equal(undefined);
  });

  it('rejected: the owner may submit again at once; the first timer spares documents the new submission holds, the new decision’s erases them', async () => {
    const owner = await signUp(api);
    await readyToSubmit(api, owner.auth);
    expect((await submit(owner)).status).to.equal(202);
    const handle = review(owner);
    const first = await awaitingReview(handle);
    await handle.signal(rejectSignal, { by: 'ops@example.com', reason: 'blurred scan' });
    expect(((await handle.result()) as KycReviewState).status).to.equal('rejected');

    // The review has ended (its timer runs apart): a resubmission is taken at once.
    expect((await submit(owner)).status).to.equal(202);
    const second = await awaitingReview(review(owner));
    expect(second.submissionId).not.to.equal(first.submissionId);
    expect(await createLocal().client.workflow.getHandle(kycDocumentRetentionWorkflowId(first.submissionId)).result()).to.deep.equal({ erased: 0 });
    const underReview = await kyc(owner);
    expect(underReview.documents.map((d: { erased_at: string | null }) => d.erased_at)).to.deep.equal([null]);

    await review(owner).signal(rejectSignal, { by: 'ops@example.com', reason: 'still blurred' });
    const settled = await until(
      () => kyc(owner),
      (view) => view.documents[0]?.erased_at !== null,
      20_000,
    );
    expect(settled).to.include({ status: 'rejected', rejection_reason: 'still blurred' });
    expect(settled.documents[0].erased_at).to.be.a('string');
    // An erased document does not count towards a new submission.
    const again = await submit(owner);
    expect(again.status).to.equal(409);
    expect((await again.json()).detail).to.include('upload at least one document');
  });
});
