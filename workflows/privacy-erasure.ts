import { log, proxyActivities, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { MAX_WAITING_PASSES, WAITING_PASS_INTERVAL, type ErasurePage, type PersonErasureInput } from '../contracts/privacy';

const { erasePersonPage, completePersonErasure } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' }, // MongoDB may be down for a while: retry until it is back
});

/**
 * An erasure of everything about one person in a workspace (`privacy-erasure-<id>`,
 * docs/decisions/0209): the workspace's calls, then its batch contacts, one page per activity
 * (each page erased and its counts recorded before the next), so a worker lost half-way resumes
 * at the page it was on and a page run twice erases nothing twice. Calls still live and contacts
 * a batch will still dial are passed over again every few minutes until they are final.
 * Then the erasure is completed and `privacy.erasure.completed` sent.
 */
export async function personErasureWorkflow(input: PersonErasureInput): Promise<{ waiting: number }> {
  let waiting = 0;
  for (let pass = 0; pass < MAX_WAITING_PASSES; pass++) {
    waiting = 0;
    for (const collection of ['calls', 'contacts'] as const) {
      let after: string | null = null;
      let pages = 0;
      do {
        setCurrentDetails(`pass ${pass + 1}: erasing ${collection}, page ${pages + 1}`);
        const page: ErasurePage = await erasePersonPage({ ...input, collection, after });
        waiting += page.waiting.length;
        after = page.nextAfter;
        pages++;
      } while (after !== null);
    }
    if (waiting === 0) break;
    setCurrentDetails(`pass ${pass + 1}: ${waiting} records still live or to be called; looking again in ${WAITING_PASS_INTERVAL}`);
    log.info('erasure waits for live records', { erasureId: input.erasureId, waiting });
    await sleep(WAITING_PASS_INTERVAL);
  }
  setCurrentDetails('completing');
  await completePersonErasure({ erasureId: input.erasureId, workspaceId: input.workspaceId, waiting });
  setCurrentDetails(waiting ? `completed; ${waiting} records were still live after the last pass` : 'completed');
  return { waiting };
}
