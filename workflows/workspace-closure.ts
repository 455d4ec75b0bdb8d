import { condition, defineSignal, log, proxyActivities, setCurrentDetails, setHandler, sleep } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import {
  MAX_WAITING_PASSES,
  WAITING_PASS_INTERVAL,
  WORKSPACE_CLOSURE_CANCEL_SIGNAL,
  WORKSPACE_ERASURE_STEPS,
  type WorkspaceClosureInput,
  type WorkspaceErasurePage,
  type WorkspaceErasureStep,
} from '../contracts/privacy';

const { beginWorkspaceErasure, eraseWorkspacePage, completeWorkspaceErasure } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' }, // MongoDB may be down for a while: retry until it is back
});

const cancelSignal = defineSignal(WORKSPACE_CLOSURE_CANCEL_SIGNAL);

export type WorkspaceClosureOutcome = { outcome: 'canceled' } | { outcome: 'erased'; erased: Record<WorkspaceErasureStep, number>; waiting: number };

/**
 * The closing of a workspace (`workspace-closure-<closure id>`, docs/decisions/0210): a durable
 * timer for the grace period, which the owner's cancel (recorded on the workspace, then
 * signalled) ends; then, unless the workspace says it was cancelled, its data erased step by
 * step, one page per activity (a worker lost half-way resumes at its page; a page run twice
 * erases nothing twice). Calls still live and contacts a batch will still dial are passed over
 * again every few minutes, as in an erasure by person. Invoices are never touched.
 */
export async function workspaceClosureWorkflow(input: WorkspaceClosureInput): Promise<WorkspaceClosureOutcome> {
  let canceled = false;
  setHandler(cancelSignal, () => {
    canceled = true;
  });
  setCurrentDetails(`grace period: the workspace's data is erased at ${input.eraseAt} unless the owner cancels`);
  // Workflow time: the wait is replayed, not re-measured. At least 1 ms (no timeout would mean forever).
  const graceMs = Math.max(1, Date.parse(input.eraseAt) - Date.now());
  if (await condition(() => canceled, graceMs)) return { outcome: 'canceled' };
  // The workspace decides: a cancel whose signal was lost has still removed the closure.
  if (!(await beginWorkspaceErasure(input))) return { outcome: 'canceled' };

  const erased = Object.fromEntries(WORKSPACE_ERASURE_STEPS.map((step) => [step, 0])) as Record<WorkspaceErasureStep, number>;
  let waiting = 0;
  for (let pass = 0; pass < MAX_WAITING_PASSES; pass++) {
    waiting = 0;
    for (const step of WORKSPACE_ERASURE_STEPS) {
      let after: string | null = null;
      let pages = 0;
      do {
        setCurrentDetails(`erasing (pass ${pass + 1}): ${step}, page ${pages + 1}`);
        const page: WorkspaceErasurePage = await eraseWorkspacePage({ ...input, step, after });
        erased[step] += page.erased;
        waiting += page.waiting;
        after = page.nextAfter;
        pages++;
      } while (after !== null);
    }
    if (waiting === 0) break;
    setCurrentDetails(`pass ${pass + 1}: ${waiting} calls or contacts still live; looking again in ${WAITING_PASS_INTERVAL}`);
    log.info('workspace erasure waits for live records', { workspaceId: input.workspaceId, waiting });
    await sleep(WAITING_PASS_INTERVAL);
  }
  setCurrentDetails('completing');
  await completeWorkspaceErasure({ ...input, erased, waiting });
  setCurrentDetails(waiting ? `erased; ${waiting} records were still live after the last pass` : 'erased');
  return { outcome: 'erased', erased, waiting };
}
