/**
 * Staff decide a workspace's KYC review from a terminal:
 *   npm run kyc:approve -- <workspace_id>
 *   npm run kyc:reject -- <workspace_id> "<reason>"
 * Sends the signal `approve` {by} or `reject` {by, reason} to the workflow
 * `kyc-<workspace_id>` on TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE, waits briefly for the
 * workflow to apply it and prints the review's state. `by` is KYC_STAFF, else the OS user.
 */
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config/env';
import { temporalConnectionOptions } from '../domain/shared/temporal';
import { scriptPayloadEncryption } from './infra/local-payload-key';
import { workflowIds } from '../contracts/ids';
import { MAX_REJECTION_REASON_LENGTH } from '../contracts/kyc';
import { kycReviewOutcomeWithin, sendKycDecision } from '../domain/kyc/temporal';

const USAGE = 'usage: npm run kyc:approve -- <workspace_id>\n       npm run kyc:reject -- <workspace_id> "<reason>"';
/** How long to wait for the workflow to apply the decision before leaving it to the worker. */
const APPLY_WAIT_MS = 30_000;

type Decision = { action: 'approve'; workspaceId: string } | { action: 'reject'; workspaceId: string; reason: string };

class UsageError extends Error {}

function parseDecision(args: string[]): Decision {
  const [action, workspaceId, ...rest] = args;
  if (action !== 'approve' && action !== 'reject') throw new UsageError(`unknown action "${action ?? ''}"`);
  if (!workspaceId || !/^[0-9a-f]{32}$/.test(workspaceId)) throw new UsageError(`"${workspaceId ?? ''}" is not a workspace id (32 hexadecimal characters)`);
  if (action === 'approve') {
    if (rest.length) throw new UsageError('approve takes only the workspace id');
    return { action, workspaceId };
  }
  const reason = rest.join(' ').trim();
  if (!reason) throw new UsageError('reject needs a reason the owner will read, in quotes');
  if (reason.length > MAX_REJECTION_REASON_LENGTH) throw new UsageError(`the reason is longer than ${MAX_REJECTION_REASON_LENGTH} characters`);
  return { action, workspaceId, reason };
}

async function main(): Promise<void> {
  const decision = parseDecision(process.argv.slice(2));
  const by = process.env.KYC_STAFF?.trim() || os.userInfo().username;
  const config = loadConfig();
  const connection = await Connection.connect(
    temporalConnectionOptions(config.temporalAddress, config.temporalNamespace, config.temporalSecurity, scriptPayloadEncryption(config)),
  ).catch((err: Error) => {
    throw new Error(`cannot reach Temporal at ${config.temporalAddress} (${err.message}); set TEMPORAL_ADDRESS`);
  });
  try {
    const client = new Client({ connection, namespace: config.temporalNamespace });
    await sendKycDecision(
      client,
      decision.workspaceId,
      decision.action === 'approve' ? { action: 'approve', by } : { action: 'reject', by, reason: decision.reason },
    );
    console.log(`sent ${decision.action} to ${workflowIds.kyc(decision.workspaceId)} as ${by}`);
    const applied = await kycReviewOutcomeWithin(client, decision.workspaceId, APPLY_WAIT_MS);
    if (applied)
      console.log(`KYC of workspace ${decision.workspaceId} is ${applied.status} (by ${applied.decidedBy}${applied.reason ? `: ${applied.reason}` : ''})`);
    else console.log(`the decision is recorded in the workflow; it is applied as soon as an "ops" worker runs it`);
  } finally {
    await connection.close();
  }
}

main().catch((err: Error) => {
  console.error(err instanceof UsageError ? `${err.message}\n${USAGE}` : `kyc decision failed: ${err.message}`);
  process.exitCode = 1;
});
