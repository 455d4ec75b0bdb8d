import type { EraseExpiredInput } from '../contracts/retention';
import { eraseExpired } from '../domain/privacy/retention';
import type { Clock } from './clock';

/** The retention sweep's one activity (docs/decisions/0215): a bounded batch, safe to retry (erasing twice erases nothing more). */
export function createRetentionActivities(deps: { clock: Clock }) {
  return {
    async eraseExpired(input: EraseExpiredInput): Promise<{ erased: number; more: boolean }> {
      return eraseExpired(input.kind, input.batchSize, deps.clock.now());
    },
  };
}
