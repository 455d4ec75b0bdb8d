import path from 'node:path';
import { expect } from 'chai';
import { ESLint } from 'eslint';
import { ROOT } from '../../scripts/infra/processes';

/** ESLint with the project's config, without type information: the rules tested here need none (type-aware rules need files of the TypeScript project). */
function projectLinter(): ESLint {
  return new ESLint({
    cwd: ROOT,
    overrideConfig: {
      languageOptions: { parserOptions: { projectService: false, project: null } },
      rules: { '@typescript-eslint/no-floating-promises': 'off' },
    },
  });
}

/** The messages of one rule for `code` linted as the project file `file`. */
async function ruleMessages(eslint: ESLint, file: string, code: string, ruleId: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === ruleId).map((m) => m.message);
}

/** The workflow-sandbox import bans of eslint.config.mjs, exercised on sample workflow code. */
describe('lint: workflow sandbox import bans', function () {
  this.timeout(60_000);
  const eslint = projectLinter();
  const lintWorkflow = (code: string) => ruleMessages(eslint, 'workflows/sample.ts', code, '@typescript-eslint/no-restricted-imports');

  for (const [what, line] of [
    ['a Node built-in', "import fs from 'fs';"],
    ['a node: built-in', "import { randomUUID } from 'node:crypto';"],
    ['mongoose', "import mongoose from 'mongoose';"],
    ['express', "import express from 'express';"],
    ['the worker package', "import { Worker } from '@temporalio/worker';"],
    ['the client package', "import { Client } from '@temporalio/client';"],
    ['a value import of activities', "import { createActivities } from '../activities';"],
    ['a value import of an activity module', "import { createProbeActivities } from '../activities/probes';"],
  ] as const) {
    it(`rejects ${what}`, async () => {
      expect(await lintWorkflow(`${line}\nexport const x = 1;\n`)).to.have.length(1);
    });
  }

  it('allows the workflow SDK, shared modules and type imports of activities', async () => {
    const code = [
      "import { sleep } from '@temporalio/workflow';",
      "import { defineSearchAttributeKey } from '@temporalio/common';",
      "import type { createActivities } from '../activities';",
      "import { TASK_QUEUES } from '../contracts/task-queues';",
      'export type A = ReturnType<typeof createActivities>;',
      'export const x = [sleep, defineSearchAttributeKey, TASK_QUEUES];',
    ].join('\n');
    expect(await lintWorkflow(code)).to.deep.equal([]);
  });

  it('does not apply the bans outside workflows/', async () => {
    const [result] = await eslint.lintText("import fs from 'fs';\nexport const x = fs;\n", { filePath: path.join(ROOT, 'activities', 'sample.ts') });
    expect(result.messages.filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports')).to.deep.equal([]);
  });
});

/** The layers' import bans of eslint.config.mjs: shared layers never import a process's code. */
describe('lint: layer boundaries', function () {
  this.timeout(60_000);
  const eslint = projectLinter();
  const bansIn = (file: string, line: string) => ruleMessages(eslint, file, `${line}\nexport const x = 1;\n`, '@typescript-eslint/no-restricted-imports');

  for (const file of ['db/models/sample.ts', 'domain/calls/sample.ts', 'providers/tts/sample.ts', 'simulators/tts/sample.ts']) {
    const up = '../'.repeat(file.split('/').length - 1);
    for (const [what, target] of [
      ['the API', 'api/http-error'],
      ['the media process', 'media/conversation/engine'],
      ['the workers', 'workers/roles'],
      ['an activity module', 'activities/probes'],
      ['the activities', 'activities'],
    ] as const) {
      it(`${file.split('/')[0]}/ may not import ${what}`, async () => {
        expect(await bansIn(file, `import { y } from '${up}${target}';`)).to.have.length(1);
      });
    }
  }

  it('lets domain/ use db/, providers/ and itself, and the API use everything', async () => {
    expect(
      await bansIn(
        'domain/calls/sample.ts',
        "import { Call } from '../../db/models/call';\nimport { y } from '../../providers/errors';\nimport { z } from '../shared/time';",
      ),
    ).to.deep.equal([]);
    expect(
      await bansIn('api/routes/sample.ts', "import { y } from '../../domain/calls/views';\nimport { z } from '../../media/conversation/engine';"),
    ).to.deep.equal([]);
  });

  it('keeps workflows to contracts/ and the activities type: not even types from the shared layers (issue 30)', async () => {
    const [value] = await bansIn('workflows/sample.ts', "import { Call } from '../db/models/call';");
    expect(value).to.match(/only through activities/);
    expect(await bansIn('workflows/sample.ts', "import type { Call } from '../db/models/call';")).to.have.length(1);
    expect(await bansIn('workflows/sample.ts', "import type { CallAgent } from '../domain/calls/queue';")).to.have.length(1);
    expect(await bansIn('workflows/sample.ts', "import type { FailedDelivery } from '../activities/webhooks/redelivery';")).to.have.length(1);
    expect(await bansIn('workflows/sample.ts', "import type { CallAgent } from '../contracts/calls';")).to.deep.equal([]);
    expect(await bansIn('workflows/sample.ts', "import type { createActivities } from '../activities';")).to.deep.equal([]);
  });
});

/** Only an area's domain/<area>/temporal.ts talks to its workflows (eslint.config.mjs, workflowClientCallBans). */
describe('lint: workflow client calls stay in domain/<area>/temporal.ts', function () {
  this.timeout(60_000);
  const eslint = projectLinter();
  const bansIn = (file: string, code: string) => ruleMessages(eslint, file, `${code}\n`, 'no-restricted-syntax');

  for (const [what, call] of [
    ['a start', "temporal.workflow.start('callWorkflow', { taskQueue: 'calls', workflowId: 'call-1' })"],
    ['a signal through a handle', "temporal.workflow.getHandle('call-1').signal('agentDeleted')"],
    ['a signal-with-start', "temporal.workflow.signalWithStart('slotKeeperWorkflow', {})"],
    ['an update-with-start', 'temporal.workflow.executeUpdateWithStart(update, {})'],
  ] as const) {
    for (const file of ['api/routes/sample.ts', 'activities/calls/sample.ts', 'media/conversation/sample.ts', 'domain/calls/sample.ts', 'scripts/sample.ts']) {
      it(`refuses ${what} in ${file}`, async () => {
        const [message] = await bansIn(file, `export async function f(temporal: any, update: any) { await ${call}; }`);
        expect(message).to.match(/only in domain\/<area>\/temporal\.ts/);
      });
    }
  }

  it('allows them in domain/<area>/temporal.ts and in tests', async () => {
    const code = "export async function f(temporal: any) { await temporal.workflow.getHandle('call-1').signal('agentDeleted'); }";
    expect(await bansIn('domain/calls/temporal.ts', code)).to.deep.equal([]);
    expect(await bansIn('test/api/sample.test.ts', code)).to.deep.equal([]);
  });
});

/** The telephony simulator plays Plivo from Plivo's side (docs/decisions/0175): the service's code reaches it as types only. */
describe('lint: the telephony simulator imports no protocol code of the service', function () {
  this.timeout(60_000);
  const eslint = projectLinter();
  const lintSimulator = (code: string) => ruleMessages(eslint, 'simulators/telephony/sample.ts', code, '@typescript-eslint/no-restricted-imports');

  for (const [what, line] of [
    ['the signer', "import { signPlivoCallback } from '../../providers/telephony/callbacks';"],
    ['the answer XML reader', "import { parseAnswerXml } from '../../providers/telephony/answer-xml';"],
    ['the stream frames', "import { parseStreamFrame } from '../../contracts/telephony-stream';"],
    ['the workflow vocabulary', "import { PROVIDER_CALL_STATUSES } from '../../contracts/calls';"],
  ] as const) {
    it(`rejects a value import of ${what}`, async () => {
      expect(await lintSimulator(`${line}\nexport const x = 1;\n`)).to.have.length(1);
    });
  }

  it('allows type imports from contracts/', async () => {
    expect(
      await lintSimulator("import type { ProviderStreamFrame } from '../../contracts/telephony-stream';\nexport type F = ProviderStreamFrame;\n"),
    ).to.deep.equal([]);
  });
});

/** Every simulator plays its provider from the provider's side (issue 28): the service's code reaches it as types only. */
describe('lint: no simulator imports protocol code of the service', function () {
  this.timeout(60_000);
  const eslint = projectLinter();
  for (const [file, line] of [
    ['simulators/stt/sample.ts', "import { openDeepgramStream } from '../../providers/stt/deepgram-style';"],
    ['simulators/tts/sample.ts', "import { createSpeechClient } from '../../providers/tts/openai-compatible';"],
    ['simulators/llm/sample.ts', "import { createLanguageModel } from '../../providers/llm/openai-compatible';"],
    ['simulators/payments/sample.ts', "import { verifyWebhookSignature } from '../../providers/payments/webhooks';"],
  ] as const) {
    it(`rejects a value import from providers/ in ${file}`, async () => {
      expect(await ruleMessages(eslint, file, `${line}\nexport const x = 1;\n`, '@typescript-eslint/no-restricted-imports')).to.have.length(1);
    });
    it(`rejects even a type import from providers/ in ${file} (issue 30: only contracts/)`, async () => {
      expect(
        await ruleMessages(
          eslint,
          file,
          "import type { LanguageModel } from '../../providers/llm/types';\nexport type L = LanguageModel;\n",
          '@typescript-eslint/no-restricted-imports',
        ),
      ).to.have.length(1);
    });
  }
});

/** contracts/ at the bottom (issue 30): db/, config/ and providers/ build on it alone among our layers, and it on none. */
describe('lint: contracts/ is the only layer beneath db/, config/, providers/ and simulators/', function () {
  this.timeout(60_000);
  const eslint = projectLinter();
  const bansIn = (file: string, line: string) => ruleMessages(eslint, file, `${line}\nexport const x = 1;\n`, '@typescript-eslint/no-restricted-imports');

  for (const file of ['db/models/sample.ts', 'config/sample.ts', 'providers/tts/sample.ts', 'simulators/tts/sample.ts']) {
    const layer = file.split('/')[0];
    const up = '../'.repeat(file.split('/').length - 1);
    for (const target of [
      'domain/accounts/permissions',
      'workflows/call',
      'db/models/call',
      'config/env',
      'providers/errors',
      'simulators/tts/simulator',
      'scripts/infra/processes',
    ].filter((t) => !t.startsWith(`${layer}/`))) {
      it(`${layer}/ may not import ${target.split('/')[0]}/`, async () => {
        expect(await bansIn(file, `import { y } from '${up}${target}';`)).to.have.length(1);
      });
    }
    it(`${layer}/ may import contracts/${layer === 'simulators' ? ' (types only)' : ''}`, async () => {
      expect(await bansIn(file, `import type { Role } from '${up}contracts/roles';`)).to.deep.equal([]);
      const valueImport = await bansIn(file, `import { ROLES } from '${up}contracts/roles';`);
      expect(valueImport).to.have.length(layer === 'simulators' ? 1 : 0);
    });
  }

  for (const target of ['db/models/call', 'domain/accounts/permissions', 'workflows/call', 'providers/errors', 'config/env', 'activities']) {
    it(`contracts/ may not import ${target.split('/')[0]}/`, async () => {
      expect(await bansIn('contracts/sample.ts', `import { y } from '../${target}';`)).to.have.length(1);
    });
  }

  it('keeps contracts/ inside the workflow sandbox, except the sealed-secret format that workflows may not import', async () => {
    expect(await bansIn('contracts/sample.ts', "import { randomBytes } from 'node:crypto';")).to.have.length(1);
    expect(await bansIn('contracts/sample.ts', "import mongoose from 'mongoose';")).to.have.length(1);
    expect(await bansIn('contracts/secret-box.ts', "import { randomBytes } from 'node:crypto';")).to.deep.equal([]);
    expect(await bansIn('workflows/sample.ts', "import { seal } from '../contracts/secret-box';")).to.have.length(1);
    expect(await bansIn('workflows/sample.ts', "import { TASK_QUEUES } from '../contracts/task-queues';")).to.deep.equal([]);
  });
});
