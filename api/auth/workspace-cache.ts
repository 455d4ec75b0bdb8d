import { performance } from 'node:perf_hooks';
import { Workspace } from '../../db/models/workspace';
import type { WorkspaceSummary } from './context';

/** How long an API process reuses a workspace it read for a key or app token (decision 0151). */
export const WORKSPACE_CACHE_MS = 1000;
const MAX_ENTRIES = 10_000;

/**
 * The active workspaces that keys and connected-app tokens act in, as access decisions need
 * them (name, status, plan), kept by each API process for `ttlMs` after the read began. A
 * workspace still in onboarding is read on every request, so its activation applies at once.
 * A change made elsewhere to an active one (a plan set by staff, a rename through another API
 * process) is seen by keyed requests at most `ttlMs` later; one made through this process
 * (`forget`) at once. The credential itself is never cached: it is read on every request.
 * Sessions do not use this cache (`loadWorkspace` reads for them).
 *
 * The promise is kept, so concurrent requests of one workspace share one read; a read that
 * fails or finds nothing is not kept.
 */
export class WorkspaceCache {
  private readonly entries = new Map<string, { readAt: number; workspace: Promise<WorkspaceSummary | null> }>();

  constructor(
    readonly ttlMs: number = WORKSPACE_CACHE_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  get(id: string): Promise<WorkspaceSummary | null> {
    const now = this.clock();
    const entry = this.entries.get(id);
    if (entry && now - entry.readAt < this.ttlMs) return entry.workspace;
    const workspace = readWorkspace(id);
    if (this.ttlMs <= 0) return workspace;
    // Re-inserted, so the Map's order is the order of reads and the oldest go first.
    this.entries.delete(id);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    const kept = { readAt: now, workspace };
    this.entries.set(id, kept);
    const drop = () => {
      if (this.entries.get(id) === kept) this.entries.delete(id);
    };
    // Only an active workspace is kept: activation (the KYC decision, made in the worker) must
    // open the workspace to its keys on the very next request, and `active` is final.
    void workspace.then((found) => {
      if (!found || found.status !== 'active') drop();
    }, drop);
    return workspace;
  }

  /** After a change made through this process: the next request reads the workspace again. */
  forget(id: string): void {
    this.entries.delete(id);
  }
}

export async function readWorkspace(id: string): Promise<WorkspaceSummary | null> {
  const workspace = await Workspace.findById(id, { name: 1, status: 1, plan: 1 }).lean();
  return workspace ? { id: workspace._id, name: workspace.name, status: workspace.status, plan: workspace.plan } : null;
}
