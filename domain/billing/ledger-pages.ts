import { LedgerHead, LedgerItem, type LedgerItemDocument } from '../../db/models/ledger-item';

/**
 * One page of a workspace's ledger, newest first. Sequence numbers run 1..n without gaps
 * (the unique `(workspace_id, seq)` index and the append loop make them so), so the page is a
 * range of `seq` and `total` is the head's `seq`, read by id rather than counted.
 */
export async function ledgerPage(
  workspaceId: string,
  limit: number,
  skip: number,
): Promise<{ items: (LedgerItemDocument & { _id: string })[]; total: number }> {
  const head = await LedgerHead.findById(workspaceId, { seq: 1 }).lean();
  const total = head?.seq ?? (await LedgerItem.countDocuments({ workspace_id: workspaceId }));
  const highest = total - skip;
  if (highest < 1) return { items: [], total };
  const items = await LedgerItem.find({ workspace_id: workspaceId, seq: { $lte: highest, $gt: highest - limit } })
    .sort({ seq: -1 })
    .lean<(LedgerItemDocument & { _id: string })[]>();
  return { items, total };
}
