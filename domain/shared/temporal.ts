import fs from 'node:fs';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { TemporalSecurityConfig } from '../../config/env';
import type { PayloadEncryption } from './payload-encryption';
import type { Tracing } from './tracing';

/**
 * The process's one Temporal client. The connection is lazy so that the API starts (and
 * health reports Temporal as down) even while the Temporal server is unavailable.
 * `encryption` null only for a client that reads and writes no payloads (a health ping).
 */
export function createTemporalClient(
  address: string,
  namespace: string,
  security: TemporalSecurityConfig | null,
  encryption: PayloadEncryption | null,
  tracing: Tracing | null = null,
): Client {
  return new Client({ connection: Connection.lazy(temporalConnectionOptions(address, namespace, security, encryption, tracing)), namespace });
}

/**
 * Options for Connection.connect / NativeConnection.connect: plain gRPC, or TLS with an API key
 * or a client certificate (Temporal Cloud). An API key also names the namespace in the
 * `temporal-namespace` header, which Temporal Cloud's regional endpoints route by. The payload
 * encryption rides on the connection as a plugin: every Client and Worker made on it encrypts
 * (docs/decisions/0200). So does tracing, when on (docs/observability.md): the OpenTelemetry
 * interceptors of clients, workflows and activities.
 */
export function temporalConnectionOptions(
  address: string,
  namespace: string,
  security: TemporalSecurityConfig | null,
  encryption: PayloadEncryption | null,
  tracing: Tracing | null = null,
) {
  const installed = [...(encryption ? [encryption.plugin] : []), ...(tracing ? [tracing.temporalPlugin] : [])];
  const plugins = installed.length ? { plugins: installed } : {};
  if (!security) return { address, ...plugins };
  const read = (file: string) => fs.readFileSync(file);
  return {
    address,
    ...plugins,
    tls: {
      ...(security.serverName ? { serverNameOverride: security.serverName } : {}),
      ...(security.caFile ? { serverRootCACertificate: read(security.caFile) } : {}),
      ...(security.clientCertFile && security.clientKeyFile
        ? { clientCertPair: { crt: read(security.clientCertFile), key: read(security.clientKeyFile) } }
        : {}),
    },
    ...(security.apiKey ? { apiKey: security.apiKey, metadata: { 'temporal-namespace': namespace } } : {}),
  };
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
