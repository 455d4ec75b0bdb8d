import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';

/**
 * The process's one Temporal client. The connection is lazy so that the API starts (and
 * health reports Temporal as down) even while the Temporal server is unavailable.
 */
export function createTemporalClient(address: string, namespace: string): Client {
  return new Client({ connection: Connection.lazy({ address }), namespace });
}

/**
 * The workflow's result, or undefined after `ms`. The long-poll is aborted at the deadline so
 * that no request is left polling (and later rejecting) after the caller has been answered.
 */
export async function resultWithin<T>(temporal: Client, getResult: () => Promise<T>, ms: number): Promise<T | undefined> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    return await temporal.withAbortSignal(controller.signal, getResult);
  } catch (err) {
    if (controller.signal.aborted) return undefined;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** For a cancel that has nothing left to stop: a workflow that never ran (or is past retention) is fine. */
export function ignoreWorkflowNotFound(err: unknown): void {
  if (!(err instanceof WorkflowNotFoundError)) throw err;
}
