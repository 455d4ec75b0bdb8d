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
    { regex: '(^|/)activities$', allowTypeImports: true, message: 'Import activities as types only and call them through proxyActivities.' },
    {
      regex: '(^|/)activities/',
      message:
        'Workflow code takes the shapes it shares with activities from contracts/ (issue 30); only `createActivities` comes from activities/, as a type.',
    },
    { group: ['**/api/**', '**/workers/**', '**/media/**', '**/config/**'], message: 'Workflow code must not depend on process-level modules.' },
    {
      group: ['**/db/**', '**/domain/**', '**/providers/**', '**/simulators/**'],
      message: 'Workflow code reaches data and outside services only through activities, and takes shared shapes from contracts/ (issue 30).',
    },
    { group: ['**/contracts/secret-box'], message: 'Sealing secrets needs node:crypto: an activity does it, not workflow code.' },
  ],
};

// The layers' direction (README, "Architecture"): db/, domain/, providers/ and simulators/ are
// shared by every process, so they never import a process's own code (api/, media/, workers/)
// nor the activities that wrap them for Temporal.
export const layerImportBans = {
  patterns: [
    { group: ['**/api', '**/api/**', '!@opentelemetry/api'], message: 'Shared layers must not import the API process; move what both need into domain/.' },
    { group: ['**/media', '**/media/**'], message: 'Shared layers must not import the media process; move what both need into domain/ or providers/.' },
    { group: ['**/workers', '**/workers/**'], message: 'Shared layers must not import the workers.' },
    { group: ['**/activities', '**/activities/**'], message: 'Shared layers must not import activities: activities call the domain, not the reverse.' },
  ],
};

// Our own layers, as folders at the top of the repository.
const OUR_LAYERS = ['api', 'activities', 'config', 'contracts', 'db', 'domain', 'media', 'providers', 'scripts', 'simulators', 'workers', 'workflows'];
const layerGroup = (layer) => [`**/${layer}`, `**/${layer}/**`];

// The foundation (issue 30): db/, config/ and providers/ are used by every process and build on
// contracts/ alone among our layers (besides themselves), so that the map of imports says what
// the code does: nothing below domain/ reaches up into it, and none of them into another.
export const foundationImportBans = (layer) => ({
  patterns: OUR_LAYERS.filter((other) => other !== layer && other !== 'contracts').map((other) => ({
    group: layerGroup(other),
    message: `${layer}/ builds on contracts/ alone among our layers (issue 30): move what both need into contracts/.`,
  })),
});

// A simulator plays the provider from the provider's documentation (README, "Architecture"):
// it imports none of the service's code, or the two would agree with each other's mistakes;
// only types of contracts/, the shapes that cross the wire (docs/decisions/0175, issues 28, 30).
export const simulatorImportBans = {
  patterns: [
    ...OUR_LAYERS.filter((other) => other !== 'simulators' && other !== 'contracts').map((other) => ({
      group: layerGroup(other),
      message: "A simulator is written from the provider's side: it imports none of the service's code (types of contracts/ only).",
    })),
    { group: layerGroup('contracts'), allowTypeImports: true, message: "A simulator is written from the provider's side: import only types from contracts/." },
  ],
};

// contracts/ is the bottom layer: every other imports it, it imports none of them. Workflows
// import it too, so it keeps to what their sandbox allows (no Node built-ins, no I/O), except
// the sealed-secret format, which workflows never import.
export const contractsImportBans = {
  paths: workflowImportBans.paths,
  patterns: [
    ...workflowImportBans.patterns.filter((pattern) => pattern.group?.includes('node:*')),
    ...OUR_LAYERS.filter((other) => other !== 'contracts').map((other) => ({
      group: layerGroup(other),
      message: 'contracts/ is the bottom layer: it imports none of our other layers.',
    })),
  ],
};

// Each area's domain/<area>/temporal.ts is the only code that starts, signals, queries or
// updates that area's workflows (README, "Architecture"): routes, MCP tools, activities, the
// media node and scripts call its functions, so message names, ids and start options live in
// one place per area. Tests may drive workflows directly.
export const workflowClientCallBans = ['getHandle', 'start', 'execute', 'signalWithStart', 'executeUpdateWithStart', 'startUpdateWithStart'].map((method) => ({
  selector: `MemberExpression[object.type='MemberExpression'][object.property.name='workflow'][property.name='${method}']`,
  message: `Start, signal, query or update an area's workflows only in domain/<area>/temporal.ts (found .workflow.${method}).`,
}));

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.tools/**',
      '.data/**',
      '.venv/**',
      '.schemathesis/**',
      'schemathesis-report/**',
      'schemas/api-types.d.ts',
      'eslint.config.mjs',
    ],
  },
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
    files: ['domain/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', layerImportBans] },
  },
  ...['db', 'config', 'providers'].map((layer) => ({
    files: [`${layer}/**/*.ts`],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', foundationImportBans(layer)] },
  })),
  {
    files: ['simulators/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', simulatorImportBans] },
  },
  {
    files: ['contracts/**/*.ts'],
    ignores: ['contracts/secret-box.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', contractsImportBans] },
  },
  {
    files: ['contracts/secret-box.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: contractsImportBans.paths.filter((path) => !nodeBuiltins.includes(path.name)),
          patterns: contractsImportBans.patterns.filter((pattern) => !pattern.group?.includes('node:*')),
        },
      ],
    },
  },
  {
    files: [
      'api/**/*.ts',
      'activities/**/*.ts',
      'config/**/*.ts',
      'db/**/*.ts',
      'domain/**/*.ts',
      'media/**/*.ts',
      'providers/**/*.ts',
      'scripts/**/*.ts',
      'simulators/**/*.ts',
      'workers/**/*.ts',
    ],
    ignores: ['domain/*/temporal.ts'],
    rules: { 'no-restricted-syntax': ['error', ...workflowClientCallBans] },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
);
