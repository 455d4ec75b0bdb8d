import { balanceSummaryOf } from './summary';
import { HttpError } from '../shared/http-error';

/** The balance summary of GET /billing and the MCP tool `get_balance`; 404 when the workspace is gone. */
export async function balanceSummaryFor(workspaceId: string): Promise<NonNullable<Awaited<ReturnType<typeof balanceSummaryOf>>>> {
  const summary = await balanceSummaryOf(workspaceId);
  if (!summary) throw new HttpError(404, 'workspace not found');
  return summary;
}
