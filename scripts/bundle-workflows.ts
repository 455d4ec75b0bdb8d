import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/**
 * Bundles the workflow code once at build time (dist/workflow-bundle.js), so workers start
 * without running webpack. Workers fall back to bundling from source when it is absent.
 */
async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: quietLogger });
  const out = path.resolve(__dirname, '..', 'workflow-bundle.js');
  fs.writeFileSync(out, code);
  console.log(`[build] workflow bundle written to ${path.relative(process.cwd(), out)}`);
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
