// Lint rules. The block for workflows/ keeps the Temporal workflow sandbox deterministic:
// no Node built-ins, no I/O libraries, no worker/client packages, and activities only as types.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = builtinModules.filter((name) => !name.startsWith('_'));

export const workflowImportBans = {
  paths: [
    ...nodeBuiltins.map((name) => ({ name, message: 'Node built-ins are not available in workflow code; use an activity.' })),
    ...['mongoose', 'mongodb', 'express', 'express-openapi-validator', 'ws', 'openai', 'jose'].map((name) => ({
      name,
      message: 'I/O belongs in activities, not in deterministic workflow code.',
    })),
    ...['@temporalio/worker', '@temporalio/client', '@temporalio/activity', '@temporalio/testing'].map((name) => ({
      name,
      message: 'Workflow code may import only @temporalio/workflow and @temporalio/common.',
    })),
  ],
  patterns: [
    { group: ['node:*'], message: 'Node built-ins are not available in workflow code; use an activity.' },
    { group: ['**/activities', '**/activities/**'], allowTypeImports: true, message: 'Import activities as types only and call them through proxyActivities.' },
    { group: ['**/api/**', '**/workers/**', '**/media/**', '**/config/**'], message: 'Workflow code must not depend on process-level modules.' },
    { group: ['**/db/**', '**/domain/**', '**/providers/**', '**/simulators/**'], allowTypeImports: true, message: 'Workflow code reaches data and outside services only through activities (types only here).' },
  ],
};

// The layers' direction (README, "Architecture"): db/, domain/, providers/ and simulators/ are
// shared by every process, so they never import a process's own code (api/, media/, workers/)
// nor the activities that wrap them for Temporal.
export const layerImportBans = {
  patterns: [
    { group: ['**/api', '**/api/**'], message: 'Shared layers must not import the API process; move what both need into domain/.' },
    { group: ['**/media', '**/media/**'], message: 'Shared layers must not import the media process; move what both need into domain/ or providers/.' },
    { group: ['**/workers', '**/workers/**'], message: 'Shared layers must not import the workers.' },
    { group: ['**/activities', '**/activities/**'], message: 'Shared layers must not import activities: activities call the domain, not the reverse.' },
  ],
};

// A simulator plays the provider from the provider's documentation (README, "Architecture"):
// it imports none of the service's protocol code (signing, parsing, XML, frames), or the two
// would agree with each other's mistakes; only types from providers/ and workflows/. Held for
// every simulator (docs/decisions/0175, issue 28).
export const simulatorImportBans = {
  patterns: [
    ...layerImportBans.patterns,
    { group: ['**/providers/**', '**/workflows/**', '**/domain/**', '**/db/**'], allowTypeImports: true, message: "A simulator is written from the provider's side: import only types from the service's code." },
  ],
};

// Each area's domain/<area>/temporal.ts is the only code that starts, signals, queries or
// updates that area's workflows (README, "Architecture"): routes, MCP tools, activities, the
// media node and scripts call its functions, so message names, ids and start options live in
// one place per area. Tests may drive workflows directly.
export const workflowClientCallBans = [
  'getHandle',
  'start',
  'execute',
  'signalWithStart',
  'executeUpdateWithStart',
  'startUpdateWithStart',
].map((method) => ({
  selector: `MemberExpression[object.type='MemberExpression'][object.property.name='workflow'][property.name='${method}']`,
  message: `Start, signal, query or update an area's workflows only in domain/<area>/temporal.ts (found .workflow.${method}).`,
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', '.data/**', '.venv/**', '.schemathesis/**', 'schemathesis-report/**', 'schemas/api-types.d.ts', 'eslint.config.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', workflowImportBans] },
  },
  {
    files: ['db/**/*.ts', 'domain/**/*.ts', 'providers/**/*.ts', 'simulators/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', layerImportBans] },
  },
  {
    files: ['simulators/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', simulatorImportBans] },
  },
  {
    files: ['api/**/*.ts', 'activities/**/*.ts', 'config/**/*.ts', 'db/**/*.ts', 'domain/**/*.ts', 'media/**/*.ts', 'providers/**/*.ts', 'scripts/**/*.ts', 'simulators/**/*.ts', 'workers/**/*.ts'],
    ignores: ['domain/*/temporal.ts'],
    rules: { 'no-restricted-syntax': ['error', ...workflowClientCallBans] },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
);
