import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { languageModelsEnv } from '../../config/env';
import { startTestProviders, type TestProviders } from '../support/providers';

/**
 * `npm run check:providers` (docs/decisions/0191) as an operator runs it, a process reading its
 * settings from the environment, here pointed at the simulators of every outside service.
 */
describe('npm run check:providers', function () {
  this.timeout(120_000);
  let providers: TestProviders;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    providers = await startTestProviders({ timeoutMs: 5_000 });
    const { telephony, tts, stt, llm } = providers.config;
    env = {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      PUBLIC_API_URL: 'https://api.example.com/api/v1',
      TELEPHONY_BASE_URL: telephony!.baseUrl,
      PLIVO_AUTH_ID: telephony!.authId,
      PLIVO_AUTH_TOKEN: telephony!.authToken,
      TTS_BASE_URL: tts!.baseUrl,
      TTS_API_KEY: tts!.apiKey,
      STT_BASE_URL: stt!.baseUrl,
      STT_API_KEY: stt!.apiKey,
      PROVIDER_TIMEOUT_MS: '5000',
      ...languageModelsEnv(llm),
    };
  });
  after(() => providers.close());

  const run = (overrides: NodeJS.ProcessEnv) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const merged = Object.fromEntries(Object.entries({ ...env, ...overrides }).filter(([, value]) => value !== undefined));
      execFile(process.execPath, ['--require', 'tsx/cjs', 'scripts/check-providers.ts'], { env: merged, timeout: 90_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  /** The table's row for a provider and check, as its cells. */
  const row = (stdout: string, provider: string, check: string) => {
    const line = stdout.split('\n').find((l) => l.startsWith(provider) && l.includes(check));
    expect(line, `${provider} / ${check} in:\n${stdout}`).to.not.equal(undefined);
    return line!;
  };

  it('passes with every provider answering: the numbers, the signature, the sentence heard back, each model, with latencies', async () => {
    const { code, stdout, stderr } = await run({});
    expect(code, stdout + stderr).to.equal(0);
    expect(row(stdout, 'telephony (Plivo)', 'account and numbers')).to.match(/\bok\b.*\d+ ms.*10 numbers \(first page\)|\bok\b.*\d+ ms.*10 numbers/);
    expect(row(stdout, 'telephony (Plivo)', 'callback signature')).to.match(/\bok\b.*verified; a changed field refused/);
    expect(row(stdout, 'speech synthesis', 'say a sentence')).to.match(/\bok\b +\d+ ms.*s of audio/);
    expect(row(stdout, 'speech recognition', 'transcribe it back')).to.match(
      /\bok\b +\d+ ms.*"Your order will reach you tomorrow morning\." \(word error rate 0%\)/,
    );
    for (const provider of ['openai', 'azure_openai', 'local'])
      expect(row(stdout, `language model (${provider})`, 'answers a prompt')).to.match(/\bok\b +\d+ ms/);
    expect(stdout).to.include('every configured provider answered');
  });

  it('fails naming the setting to fix on a wrong key, and reports a provider left unset as not configured', async () => {
    const { code, stdout, stderr } = await run({
      LLM_AZURE_API_KEY: 'wrong-key',
      LLM_LOCAL_BASE_URL: undefined,
      LLM_LOCAL_API_KEY: undefined,
      LLM_LOCAL_MODEL: undefined,
    });
    expect(code).to.equal(1);
    expect(row(stdout, 'language model (azure_openai)', 'answers a prompt')).to.match(/FAILED +\d+ ms +LLM_AZURE_API_KEY +.*refused the credentials/);
    expect(row(stdout, 'language model (local)', 'answers a prompt')).to.match(/not configured +- +LLM_LOCAL_BASE_URL/);
    expect(row(stdout, 'language model (openai)', 'answers a prompt')).to.match(/\bok\b/);
    expect(stderr).to.include('1 check failed: fix LLM_AZURE_API_KEY');
  });

  it('fails on wrong Plivo credentials and a wrong speech key, naming them', async () => {
    const { code, stdout, stderr } = await run({ PLIVO_AUTH_TOKEN: 'not-the-token', TTS_API_KEY: 'wrong' });
    expect(code).to.equal(1);
    expect(row(stdout, 'telephony (Plivo)', 'account and numbers')).to.match(/FAILED.*PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN/);
    expect(row(stdout, 'speech synthesis', 'say a sentence')).to.match(/FAILED.*TTS_API_KEY/);
    expect(stderr).to.match(/checks failed: fix .*PLIVO_AUTH_TOKEN.*TTS_API_KEY/);
  });
});
