import { Client, Connection } from '@temporalio/client';

/**
 * The process's one Temporal client. The connection is lazy so that the API starts (and
 * health reports Temporal as down) even while the Temporal server is unavailable.
 */
export function createTemporalClient(address: string, namespace: string): Client {
  return new Client({ connection: Connection.lazy({ address }), namespace });
}

