import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { requireTool } from '../../scripts/infra/processes';
import { createLocal } from './servers';
import { standaloneCodecEndpoint, TEST_CODEC_SERVER_TOKEN } from './codec-server';

const run = promisify(execFile);

/**
 * The Temporal CLI (`.tools/bin/temporal`) against the shared test dev server, as ops use it
 * beside the Web UI: payloads decrypted by the codec server (`--codec-endpoint`, the staff
 * token in `--codec-auth`; docs/decisions/0201). Run without blocking: the test's workers share
 * this process.
 */
async function temporal<T>(args: string[]): Promise<T> {
  const env = createLocal();
  const codec = ['--codec-endpoint', await standaloneCodecEndpoint(), '--codec-auth', `Bearer ${TEST_CODEC_SERVER_TOKEN}`];
  const { stdout } = await run(requireTool('temporal'), [
    ...args,
    '--address',
    env.address,
    '--namespace',
    env.namespace ?? 'default',
    ...codec,
    '--output',
    'json',
  ]);
  return JSON.parse(stdout) as T;
}

/** The ids of the workflows `temporal workflow list --query <query>` finds. */
export async function listedWorkflowIds(query: string): Promise<string[]> {
  const listed = await temporal<{ execution: { workflowId: string } }[]>(['workflow', 'list', '--query', query]);
  return listed.map((workflow) => workflow.execution.workflowId);
}

/** The static summary and details `temporal workflow describe` shows (the UI's title and details). */
export async function describedMetadata(workflowId: string): Promise<{ summary?: string; details?: string }> {
  const described = await temporal<{ executionConfig?: { userMetadata?: { summary?: string; details?: string } } }>([
    'workflow',
    'describe',
    '--workflow-id',
    workflowId,
  ]);
  return described.executionConfig?.userMetadata ?? {};
}

/** The workflow's current details, as `temporal workflow metadata` queries them (a worker must be running). */
export async function currentDetails(workflowId: string): Promise<string> {
  const answer = await temporal<{ queryResult: { currentDetails?: string }[] }>(['workflow', 'metadata', '--workflow-id', workflowId]);
  return answer.queryResult[0]?.currentDetails ?? '';
}
