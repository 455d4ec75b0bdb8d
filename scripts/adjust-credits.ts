/**
 * Staff adjust a workspace's credits from a terminal:
 *   npm run credits:adjust -- <workspace_id> <amount_paise> "<note>" [--ref <reference>]
 * `amount_paise` is signed (`-5000` takes ₹50 back). The change is one `adjustment` ledger
 * item with the note and the staff name, recorded in the workspace's audit log. With
 * `--ref` (a ticket id, say) running the same command again applies nothing twice. Uses
 * MONGODB_URI as the services do; the staff name is BILLING_STAFF, else the OS user.
 */
import os from 'node:os';
import { adjustCredits } from '../domain/billing/adjustments';
import { connectMongo, disconnectMongo } from '../db/connect';
import { loadConfig } from '../config/env';

const USAGE = 'usage: npm run credits:adjust -- <workspace_id> <amount_paise> "<note>" [--ref <reference>]';

class UsageError extends Error {}

interface Command {
  workspaceId: string;
  amountPaise: number;
  note: string;
  reference?: string;
}

function parseCommand(args: string[]): Command {
  const refAt = args.indexOf('--ref');
  const reference = refAt >= 0 ? args[refAt + 1] : undefined;
  if (refAt >= 0 && !reference?.trim()) throw new UsageError('--ref needs a reference');
  const rest = refAt >= 0 ? [...args.slice(0, refAt), ...args.slice(refAt + 2)] : args;
  const [workspaceId, amount, ...noteWords] = rest;
  if (!workspaceId || !/^[0-9a-f]{32}$/.test(workspaceId)) throw new UsageError(`"${workspaceId ?? ''}" is not a workspace id (32 hexadecimal characters)`);
  if (!amount || !/^[+-]?[0-9]+$/.test(amount) || Number(amount) === 0)
    throw new UsageError(`"${amount ?? ''}" is not an amount (a whole, signed, non-zero number of paise)`);
  if (!Number.isSafeInteger(Number(amount))) throw new UsageError(`"${amount}" is too large`);
  const note = noteWords.join(' ').trim();
  if (!note) throw new UsageError('an adjustment needs a note the workspace will read, in quotes');
  return { workspaceId, amountPaise: Number(amount), note, reference: reference?.trim() };
}

async function main(): Promise<void> {
  const command = parseCommand(process.argv.slice(2));
  const by = process.env.BILLING_STAFF?.trim() || os.userInfo().username;
  await connectMongo(loadConfig().mongodbUri);
  try {
    const outcome = await adjustCredits({ ...command, by, at: new Date() });
    if (outcome.kind === 'no_workspace') throw new Error(`no workspace ${command.workspaceId}; nothing was changed`);
    const verb = outcome.kind === 'applied' ? 'adjusted' : 'already adjusted (same --ref); nothing changed:';
    console.log(
      `${verb} workspace ${command.workspaceId} by ${command.amountPaise} paise as ${by}; balance ${outcome.balanceAfterPaise} paise (ledger item ${outcome.itemId})`,
    );
  } finally {
    await disconnectMongo();
  }
}

main().catch((err: Error) => {
  if (err instanceof UsageError) console.error(`${err.message}\n${USAGE}`);
  else console.error(`credits:adjust: ${err.message}`);
  process.exitCode = 1;
});
