import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflows } from '../workers/bootstrap';

/**
 * Bundles the workflow code once at build time (dist/workflow-bundle.js), so workers start
 * without running webpack. Workers fall back to bundling from source when it is absent.
 */
async function main(): Promise<void> {
  // With the tracing interceptors: a worker traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/observability.md).
  const { code } = await bundleWorkflows(undefined, { tracing: true });
  const out = path.resolve(__dirname, '..', 'workflow-bundle.js');
  fs.writeFileSync(out, code);
  console.log(`[build] workflow bundle written to ${path.relative(process.cwd(), out)}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
