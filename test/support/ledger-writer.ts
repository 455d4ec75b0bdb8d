/**
 * A ledger writer in a process of its own (forked by the charging test): appends of one
 * workspace race across processes only, since each process queues its own appends.
 * argv: <mongodb uri> <json: LedgerEntry without `at`, as an array>. Exits 0 when all are applied.
 */
import { connectMongo, disconnectMongo } from '../../db/connect';
import { appendLedgerItem, type LedgerEntry } from '../../domain/billing/ledger';

async function main(): Promise<void> {
  const [uri, json] = process.argv.slice(2);
  if (!uri || !json) throw new Error('usage: ledger-writer <mongodb uri> <entries json>');
  await connectMongo(uri);
  const entries = JSON.parse(json) as Omit<LedgerEntry, 'at'>[];
  await Promise.all(entries.map((entry) => appendLedgerItem({ ...entry, at: new Date() })));
  await disconnectMongo();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
