/**
 * Staff decide workspaces' concurrency limits from a terminal:
 *   npm run limits:approve -- <request_id> [limit]
 *   npm run limits:reject -- <request_id> "<note>"
 *   npm run limits:set -- <workspace_id> <limit|plan>
 * Approve grants the limit asked for (or `limit` instead); reject keeps the limit and shows the
 * note to the workspace; set changes the limit without a request (`plan`: back to the plan's).
 * A new limit is written on the workspace, then sent to its slot keeper `slots-<workspace_id>`
 * with the signal `setLimit`. Uses MONGODB_URI, TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE, as
 * the services do; the staff name is LIMITS_STAFF, else KYC_STAFF, else the OS user.
 */
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { approveLimitRequest, LimitDecisionError, rejectLimitRequest, setConcurrencyLimit, type KeeperNotice } from '../domain/calls/limit-requests';
import { connectMongo, disconnectMongo } from '../db/connect';
import { loadConfig } from '../config/env';
import { temporalConnectionOptions } from '../domain/shared/temporal';
import { scriptPayloadEncryption } from './infra/local-payload-key';

const USAGE = [
  'usage: npm run limits:approve -- <request_id> [limit]',
  '       npm run limits:reject -- <request_id> "<note>"',
  '       npm run limits:set -- <workspace_id> <limit|plan>',
].join('\n');

type Command =
  | { action: 'approve'; requestId: string; limit?: number }
  | { action: 'reject'; requestId: string; note: string }
  | { action: 'set'; workspaceId: string; limit: number | null };

class UsageError extends Error {}

const ID = /^[0-9a-f]{32}$/;

function parseCommand(args: string[]): Command {
  const [action, id, ...rest] = args;
  if (action !== 'approve' && action !== 'reject' && action !== 'set') throw new UsageError(`unknown action "${action ?? ''}"`);
  const what = action === 'set' ? 'workspace id' : 'limit request id';
  if (!id || !ID.test(id)) throw new UsageError(`"${id ?? ''}" is not a ${what} (32 hexadecimal characters)`);
  if (action === 'approve') {
    if (rest.length > 1) throw new UsageError('approve takes the request id and, optionally, the limit to grant instead');
    return { action, requestId: id, limit: rest.length ? parseLimit(rest[0]) : undefined };
  }
  if (action === 'reject') {
    const note = rest.join(' ').trim();
    if (!note) throw new UsageError('reject needs a note the workspace will read, in quotes');
    return { action, requestId: id, note };
  }
  if (rest.length !== 1) throw new UsageError('set takes the workspace id and the limit (or "plan" for the plan\'s)');
  return { action, workspaceId: id, limit: rest[0] === 'plan' ? null : parseLimit(rest[0]) };
}

function parseLimit(text: string): number {
  if (!/^[0-9]+$/.test(text)) throw new UsageError(`"${text}" is not a limit (a whole number)`);
  return Number(text);
}

async function main(): Promise<void> {
  const command = parseCommand(process.argv.slice(2));
  const by = process.env.LIMITS_STAFF?.trim() || process.env.KYC_STAFF?.trim() || os.userInfo().username;
  const config = loadConfig();
  // Temporal first: when it cannot be reached, nothing has been changed yet.
  const connection = await Connection.connect(
    temporalConnectionOptions(config.temporalAddress, config.temporalNamespace, config.temporalSecurity, scriptPayloadEncryption(config)),
  ).catch((err: Error) => {
    throw new Error(`cannot reach Temporal at ${config.temporalAddress} (${err.message}); set TEMPORAL_ADDRESS. Nothing was changed`);
  });
  try {
    await connectMongo(config.mongodbUri);
    const deps = { temporal: new Client({ connection, namespace: config.temporalNamespace }) };
    const at = new Date();
    if (command.action === 'approve') {
      const { request, limit, keeper } = await approveLimitRequest(deps, { requestId: command.requestId, limit: command.limit, by, at });
      console.log(
        `approved limit request ${request._id} as ${by}: workspace ${request.workspace_id} may now run ${limit} calls at once; ${keeperWords(keeper)}`,
      );
    } else if (command.action === 'reject') {
      const { request } = await rejectLimitRequest({ requestId: command.requestId, note: command.note, by, at });
      console.log(`rejected limit request ${request._id} of workspace ${request.workspace_id} as ${by}; its limit is unchanged`);
    } else {
      const { limit, keeper } = await setConcurrencyLimit(deps, { workspaceId: command.workspaceId, limit: command.limit, by, at });
      console.log(
        `workspace ${command.workspaceId} may now run ${limit} calls at once${command.limit === null ? " (the plan's)" : ''}, set by ${by}; ${keeperWords(keeper)}`,
      );
    }
  } finally {
    await Promise.allSettled([disconnectMongo(), connection.close()]);
  }
}

function keeperWords(keeper: KeeperNotice): string {
  return keeper === 'signalled' ? 'its slot keeper applies it now' : 'no slot keeper is running (it reads the limit when it starts)';
}

main().catch((err: Error) => {
  if (err instanceof UsageError) console.error(`${err.message}\n${USAGE}`);
  else console.error(`limits: ${err instanceof LimitDecisionError ? '' : 'failed: '}${err.message}`);
  process.exitCode = 1;
});
