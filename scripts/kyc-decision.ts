/**
 * Staff decide a workspace's KYC review from a terminal:
 *   npm run kyc:approve -- <workspace_id>
 *   npm run kyc:reject -- <workspace_id> "<reason>"
 * Sends the signal `approve` {by} or `reject` {by, reason} to the workflow
 * `kyc-<workspace_id>` on TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE, waits briefly for the
 * workflow to apply it and prints the review's state. `by` is KYC_STAFF, else the OS user.
 */
import os from 'node:os';
import { Client, Connection, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { loadConfig } from '../config/env';
import { workflowIds } from '../workflows/shared/ids';
import { approveSignal, MAX_REJECTION_REASON_LENGTH, rejectSignal, stateQuery, type KycReviewState } from '../workflows/shared/kyc';

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
  const connection = await Connection.connect({ address: config.temporalAddress }).catch((err: Error) => {
    throw new Error(`cannot reach Temporal at ${config.temporalAddress} (${err.message}); set TEMPORAL_ADDRESS`);
  });
  try {
    const client = new Client({ connection, namespace: config.temporalNamespace });
    const workflowId = workflowIds.kyc(decision.workspaceId);
    const handle = client.workflow.getHandle(workflowId);
    await assertAwaitingDecision(handle, workflowId, config.temporalNamespace);
    if (decision.action === 'approve') await handle.signal(approveSignal, { by });
    else await handle.signal(rejectSignal, { by, reason: decision.reason });
    console.log(`sent ${decision.action} to ${workflowId} as ${by}`);
    const applied = await resultWithin(client, handle, APPLY_WAIT_MS);
    if (applied) console.log(`KYC of workspace ${decision.workspaceId} is ${applied.status} (by ${applied.decidedBy}${applied.reason ? `: ${applied.reason}` : ''})`);
    else console.log(`the decision is recorded in the workflow; it is applied as soon as an "ops" worker runs it`);
  } finally {
    await connection.close();
  }
}

/** Clear words for the cases where a signal would fail or be ignored. */
async function assertAwaitingDecision(handle: WorkflowHandle, workflowId: string, namespace: string): Promise<void> {
  let status: string;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      throw new Error(`no KYC review for this workspace: workflow ${workflowId} does not exist in namespace "${namespace}" (has the owner submitted the business details?)`);
    }
    throw err;
  }
  if (status !== 'RUNNING') {
    throw new Error(`workflow ${workflowId} is not waiting for a decision: its latest run is ${status}${status === 'COMPLETED' ? ' (already decided; a new submission starts a new run)' : ''}`);
  }
  const state = await handle.query(stateQuery);
  if (state.decidedBy) throw new Error(`workflow ${workflowId} has already been decided (${state.status} by ${state.decidedBy})`);
}

/** The workflow's final state, or undefined after `ms` (e.g. no worker is running). */
async function resultWithin(client: Client, handle: WorkflowHandle, ms: number): Promise<KycReviewState | undefined> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    return (await client.withAbortSignal(controller.signal, () => handle.result())) as KycReviewState;
  } catch (err) {
    if (controller.signal.aborted) return undefined;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

main().catch((err: Error) => {
  console.error(err instanceof UsageError ? `${err.message}\n${USAGE}` : `kyc decision failed: ${err.message}`);
  process.exitCode = 1;
});
