import { Client, Connection } from '@temporalio/client';

/**
 * The process's one Temporal client. The connection is lazy so that the API starts (and
 * health reports Temporal as down) even while the Temporal server is unavailable.
 */
export function createTemporalClient(address: string, namespace: string): Client {
  return new Client({ connection: Connection.lazy({ address }), namespace });
}

/** Round-trip time of describeNamespace, or the reason it failed. */
export async function pingTemporal(client: Client, timeoutMs = 3000): Promise<{ ok: boolean; latency_ms: number; error?: string }> {
  const started = performance.now();
  try {
    await client.connection.withDeadline(Date.now() + timeoutMs, () =>
      client.workflowService.describeNamespace({ namespace: client.options.namespace }),
    );
    return { ok: true, latency_ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), error: (err as Error).message };
  }
}
