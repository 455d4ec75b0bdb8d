import { proxyActivities, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { KycDocumentRetentionInput } from '../contracts/privacy';

const { eraseDecidedKycDocuments } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' }, // MongoDB may be down for a while: retry until it is back
});

/**
 * The retention of a decided KYC submission's documents (`kyc-documents-<submission id>`,
 * docs/decisions/0211): a durable timer until the stated period after the decision has passed,
 * then their bytes erased (the metadata and the decision stay). Started by the review as an
 * abandoned child, so that the review itself ends at the decision and a rejected workspace can
 * submit again at once.
 */
export async function kycDocumentRetentionWorkflow(input: KycDocumentRetentionInput): Promise<{ erased: number }> {
  setCurrentDetails(`keeping the documents of KYC submission ${input.submissionId} until ${input.eraseAt}`);
  // Workflow time: replayed, not re-measured. At least 1 ms.
  await sleep(Math.max(1, Date.parse(input.eraseAt) - Date.now()));
  setCurrentDetails('erasing the documents');
  const erased = await eraseDecidedKycDocuments(input);
  setCurrentDetails(`erased the bytes of ${erased} documents`);
  return { erased };
}
