/**
 * `npm run test:fuzz`: the OpenAPI fuzzer (schemathesis, from .venv/) against the whole stack
 * as `npm start` runs it (scripts/launch.ts: FerretDB, the Temporal dev server, the simulators,
 * the API, the workers and the media service) on free ports with a throw-away data folder.
 *
 * The fuzzer acts as the owner of an active workspace, activated the way staff activate one
 * (business details, a document, submission, then `npm run kyc:approve`), so that it reaches
 * the code behind authorization. Every check runs (`--checks all`) with a fixed seed; arguments
 * after `--` go to schemathesis (`npm run test:fuzz -- --max-examples 5` is CI's short pass).
 * Exits with schemathesis' status: any failure fails the run.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT, startProcess, type ManagedProcess } from '../../scripts/infra/processes';

/** The same generated cases on every run, so a failure reproduces. */
const SEED = 16;

/**
 * Operations the fuzzer must not call, each because it would end the fuzzer's own sign-in or
 * account and turn the rest of the run into 401s. Only destructive account operations belong
 * here; everything else is fuzzed.
 */
export const EXCLUDED_OPERATIONS: { operationId: string; reason: string }[] = [
  { operationId: 'logout', reason: "ends the fuzzer's session: every later request would be 401" },
  { operationId: 'revokeSession', reason: "with the id of the fuzzer's own session (listed by GET /account/sessions) it signs the fuzzer out" },
  { operationId: 'deleteAccount', reason: "deletes the fuzzer's user (refused only while it is the last owner, which the fuzzer can change)" },
];

async function main(): Promise<void> {
  const schemathesis = path.join(ROOT, '.venv', 'bin', 'schemathesis');
  if (!fs.existsSync(schemathesis)) throw new Error(`${schemathesis} is missing; run \`bash scripts/python-tools.sh\``);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-fuzz-'));
  const stackLog = path.join(dataDir, 'stack.log');
  const ports = {
    PORT: await freePort(),
    MEDIA_PORT: await freePort(),
    MONGODB_PORT: await freePort(),
    TEMPORAL_PORT: await freePort(),
    TEMPORAL_UI_PORT: await freePort(),
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
    DATA_DIR: dataDir,
    NODE_ENV: 'development',
    // Every response is checked against the document too: a mismatch is a 500 the fuzzer reports.
    VALIDATE_RESPONSES: 'true',
    // Sign-ups and sign-ins the fuzzer generates hash passwords; the production cost (2^17) would
    // spend the run's time in scrypt. Old and new hashes verify alike.
    PASSWORD_HASH_LOG_N: '12',
    HOST: '127.0.0.1',
  };
  for (const name of ['MONGODB_URI', 'TEMPORAL_ADDRESS', 'PUBLIC_API_URL', 'MEDIA_PUBLIC_URL']) delete env[name];

  console.log(`[fuzz] starting the stack (npm start's launcher; its output in ${stackLog})`);
  const stack = startProcess({
    name: 'stack',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(ROOT, 'scripts', 'launch.ts')],
    env,
    output: { file: stackLog },
  });
  let status = 1;
  try {
    const api = `http://127.0.0.1:${ports.PORT}`;
    await waitForStack(stack, stackLog);
    const owner = await activeOwner(api, {
      ...env,
      MONGODB_URI: `mongodb://127.0.0.1:${ports.MONGODB_PORT}/voice_agents`,
      TEMPORAL_ADDRESS: `127.0.0.1:${ports.TEMPORAL_PORT}`,
    });
    console.log(`[fuzz] fuzzing ${api}/openapi.json as the owner of active workspace ${owner.workspaceId}`);
    status = await run(schemathesis, [
      '--config-file',
      path.join(__dirname, 'schemathesis.toml'), // the allowances for data-dependent rules, each with its reason
      'run',
      `${api}/openapi.json`,
      '--checks',
      'all',
      '--seed',
      String(SEED),
      '--generation-database',
      'none', // nothing carried over between runs: the seed alone decides the cases
      '--request-timeout',
      '60', // POST /health/roundtrip may wait up to 30 s by design
      '--header',
      `Authorization: Bearer ${owner.token}`,
      ...EXCLUDED_OPERATIONS.flatMap((op) => ['--exclude-operation-id', op.operationId]),
      ...process.argv.slice(2),
    ]);
  } catch (err) {
    console.error(`[fuzz] ${(err as Error).message}`);
  } finally {
    stack.child.kill('SIGINT'); // the launcher stops the application, then the infrastructure
    await Promise.race([stack.exited, new Promise((r) => setTimeout(r, 30_000))]);
    if (status !== 0) console.log(`[fuzz] the stack's output: ${stackLog}`);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(status);
}

async function waitForStack(stack: ManagedProcess, log: string): Promise<void> {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const output = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    if (output.includes('Press Ctrl-C to stop.')) return;
    if (stack.child.exitCode !== null) throw new Error(`the stack exited before it was up:\n${output}`);
    if (Date.now() > deadline) throw new Error(`the stack was not up within 4 minutes:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Signs up, fills in and submits KYC over HTTP, and approves it with the staff command. */
async function activeOwner(api: string, staffEnv: NodeJS.ProcessEnv): Promise<{ token: string; workspaceId: string }> {
  const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> => {
    const isForm = body instanceof FormData;
    const res = await fetch(`${api}/api/v1${route}`, {
      method,
      headers: { ...(body !== undefined && !isForm ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${route} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const signedUp = await call('POST', '/auth/signup', { name: 'Fuzz Owner', email: `fuzz-${Date.now()}@example.com`, password: 'a long fuzzing password' });
  const token = signedUp.token as string;
  const workspaceId = (signedUp.workspace as { id: string }).id;
  const auth = { Authorization: `Bearer ${token}` };
  await call('PUT', '/kyc', KYC_DETAILS, auth);
  const form = new FormData();
  form.append('file', new Blob([PDF], { type: 'application/pdf' }), 'certificate.pdf');
  await call('POST', '/kyc/documents', form, auth);
  await call('POST', '/kyc/submit', undefined, auth);
  const approved = await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'kyc-decision.ts'), 'approve', workspaceId], {
    ...staffEnv,
    KYC_STAFF: 'fuzz',
  });
  if (approved !== 0) throw new Error('npm run kyc:approve failed');
  const workspace = await call('GET', '/workspace', undefined, auth);
  if (workspace.status !== 'active') throw new Error(`the workspace is ${String(workspace.status)} after approval`);
  return { token, workspaceId };
}

const KYC_DETAILS = {
  legal_name: 'Fuzz Voice Private Limited',
  business_type: 'private_limited',
  pan: 'AAGCB7383J',
  gstin: '29AAGCB7383J1Z4',
  address: { line1: '12 MG Road', city: 'Bengaluru', state: 'KA', pin_code: '560001' },
  contact: { name: 'Fuzz Owner', email: 'fuzz@example.com', phone: '+919876543210' },
};
const PDF = new TextEncoder().encode('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: 'inherit' });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.once('error', () => resolve(1));
  });
}

void main();
