import { randomBytes } from 'node:crypto';
import { loadConfig, type ProvidersConfig } from '../config/env';
import { CATALOG, transcriberModelFor } from '../domain/agents/catalog';
import { languageModels, LANGUAGE_MODEL_SETTINGS } from '../providers';
import { encodeMulaw, mulawSilence } from '../providers/audio/mulaw';
import { Downsampler } from '../providers/audio/pcm';
import { ProviderNotConfiguredError, ProviderRefusedError } from '../providers/errors';
import { signPlivoCallback, verifyPlivoCallback } from '../providers/telephony/callbacks';
import { PlivoTelephony } from '../providers/telephony/plivo';
import { StreamingTranscriber } from '../providers/stt/deepgram-style';
import { OpenAiCompatibleSpeech } from '../providers/tts/openai-compatible';
import { SYNTHESIS_SAMPLE_RATE } from '../providers/tts/types';
import { defaultVoiceFor } from '../providers/tts/voices';

/**
 * `npm run check:providers` (docs/decisions/0191): with the settings the service reads
 * (config/env.ts), asks each configured outside service a small real question and prints one
 * row per check: the Plivo account and its numbers, a callback signature round trip, a
 * sentence spoken and transcribed back (word error rate), a one-line prompt to each configured
 * language model. A service left unconfigured is reported so, not failed. Exits 1 when a check
 * fails, naming the settings to fix.
 */

interface Row {
  provider: string;
  check: string;
  result: 'ok' | 'FAILED' | 'not configured';
  detail: string;
  latencyMs: number | null;
  /** The settings to fix (failed) or to set (not configured). */
  setting: string;
}

const SENTENCE = 'Your order will reach you tomorrow morning.';
/** More than one word in four misheard fails the speech round trip. */
const MAX_WORD_ERROR_RATE = 0.25;

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number } | { error: unknown; ms: number }> {
  const started = performance.now();
  try {
    const value = await run();
    return { value, ms: Math.round(performance.now() - started) };
  } catch (error) {
    return { error, ms: Math.round(performance.now() - started) };
  }
}

/** The setting a failure names (a refusal's or a missing one's), else `fallback`. */
function settingOf(error: unknown, fallback: string): string {
  if (error instanceof ProviderRefusedError) return error.setting.replace(/^server settings? /, '');
  if (error instanceof ProviderNotConfiguredError) return error.setting;
  return fallback;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function checkTelephony(config: ProvidersConfig, publicApiUrl: string): Promise<Row[]> {
  const telephony = config.telephony;
  if (!telephony) {
    return [
      {
        provider: 'telephony (Plivo)',
        check: 'account and numbers',
        result: 'not configured',
        detail: '',
        latencyMs: null,
        setting: 'TELEPHONY_BASE_URL, PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN',
      },
      { provider: 'telephony (Plivo)', check: 'callback signature', result: 'not configured', detail: '', latencyMs: null, setting: 'PLIVO_AUTH_TOKEN' },
    ];
  }
  const rows: Row[] = [];
  const adapter = new PlivoTelephony({ ...telephony, timeoutMs: config.timeoutMs });
  const listed = await timed(() => adapter.listNumbers({ limit: 20, offset: 0 }));
  if ('value' in listed) {
    const numbers = listed.value.numbers;
    const more = listed.value.nextOffset !== null ? ' (first page)' : '';
    rows.push({
      provider: 'telephony (Plivo)',
      check: 'account and numbers',
      result: 'ok',
      detail: `${numbers.length} numbers${more}${numbers[0] ? `, e.g. ${numbers[0].number}` : ''}`,
      latencyMs: listed.ms,
      setting: '',
    });
  } else {
    // Plivo answers wrong credentials with 401; anything else is the address.
    const credentials = /\b40[13]\b|auth/i.test(messageOf(listed.error));
    rows.push({
      provider: 'telephony (Plivo)',
      check: 'account and numbers',
      result: 'FAILED',
      detail: messageOf(listed.error),
      latencyMs: listed.ms,
      setting: credentials ? 'PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN' : 'TELEPHONY_BASE_URL',
    });
  }
  // A status callback as Plivo signs it for this service's own callback URL, checked the way the API checks it.
  const url = `${publicApiUrl.replace(/\/$/, '')}/telephony/calls/${randomBytes(16).toString('hex')}/status`;
  const params = { CallUUID: randomBytes(8).toString('hex'), CallStatus: 'completed', From: '+918000000000', To: '+918000000001' };
  const nonce = randomBytes(10).toString('hex');
  const signed = await timed(async () => {
    const signature = signPlivoCallback(telephony.authToken, url, params, nonce);
    const accepted = verifyPlivoCallback({ authToken: telephony.authToken, url, params, nonce, signature });
    const tampered = verifyPlivoCallback({ authToken: telephony.authToken, url, params: { ...params, CallStatus: 'busy' }, nonce, signature });
    return { accepted, tampered };
  });
  const ok = 'value' in signed && signed.value.accepted && !signed.value.tampered;
  rows.push({
    provider: 'telephony (Plivo)',
    check: 'callback signature',
    result: ok ? 'ok' : 'FAILED',
    detail: ok
      ? `V3 signature of ${url} verified; a changed field refused`
      : 'value' in signed
        ? signed.value.accepted
          ? 'a changed field still verified'
          : 'its own signature did not verify'
        : messageOf(signed.error),
    latencyMs: signed.ms,
    setting: ok ? '' : 'PLIVO_AUTH_TOKEN, PUBLIC_API_URL',
  });
  return rows;
}

/** Speaks SENTENCE, then has the recogniser transcribe that audio; answers the rows and nothing else. */
async function checkSpeech(config: ProvidersConfig): Promise<Row[]> {
  const tts = config.tts;
  const stt = config.stt;
  const ttsRow = (row: Partial<Row>): Row => ({
    provider: 'speech synthesis',
    check: 'say a sentence',
    result: 'ok',
    detail: '',
    latencyMs: null,
    setting: '',
    ...row,
  });
  const sttRow = (row: Partial<Row>): Row => ({
    provider: 'speech recognition',
    check: 'transcribe it back',
    result: 'ok',
    detail: '',
    latencyMs: null,
    setting: '',
    ...row,
  });
  if (!tts)
    return [
      ttsRow({ result: 'not configured', setting: 'TTS_BASE_URL, TTS_API_KEY' }),
      sttRow(
        stt
          ? { result: 'FAILED', detail: 'needs speech synthesis for its audio', setting: 'TTS_BASE_URL' }
          : { result: 'not configured', setting: 'STT_BASE_URL, STT_API_KEY' },
      ),
    ];
  const speech = new OpenAiCompatibleSpeech({ ...tts, timeoutMs: config.timeoutMs });
  const spoken = await timed(async () => {
    const voices = await speech.listVoices();
    const voice = defaultVoiceFor(voices, 'en-IN') ?? voices[0];
    if (!voice) throw new ProviderRefusedError('speech synthesis', 'a default voice', 'server setting TTS_BASE_URL', 'it lists no voices');
    const model = CATALOG.ttsProviders[0].defaultModel;
    const chunks: Buffer[] = [];
    for await (const chunk of speech.synthesize({ text: SENTENCE, voice: voice.id, model, speed: 1, language: 'en-IN' })) chunks.push(chunk);
    return { audio: Buffer.concat(chunks), voice: voice.id, model };
  });
  if (!('value' in spoken))
    return [
      ttsRow({ result: 'FAILED', detail: messageOf(spoken.error), latencyMs: spoken.ms, setting: settingOf(spoken.error, 'TTS_BASE_URL, TTS_API_KEY') }),
      sttRow({
        result: stt ? 'FAILED' : 'not configured',
        detail: stt ? 'no audio to transcribe' : '',
        setting: stt ? 'TTS_BASE_URL' : 'STT_BASE_URL, STT_API_KEY',
      }),
    ];
  const seconds = spoken.value.audio.length / 2 / SYNTHESIS_SAMPLE_RATE;
  const rows = [ttsRow({ detail: `${seconds.toFixed(1)} s of audio (voice ${spoken.value.voice}, model ${spoken.value.model})`, latencyMs: spoken.ms })];
  if (!stt) return [...rows, sttRow({ result: 'not configured', setting: 'STT_BASE_URL, STT_API_KEY' })];

  const mulaw = encodeMulaw(new Downsampler(SYNTHESIS_SAMPLE_RATE / 8000).pushBytes(spoken.value.audio));
  const heard = await timed(() => transcribe(stt, config.timeoutMs, mulaw));
  if (!('value' in heard))
    return [
      ...rows,
      sttRow({ result: 'FAILED', detail: messageOf(heard.error), latencyMs: heard.ms, setting: settingOf(heard.error, 'STT_BASE_URL, STT_API_KEY') }),
    ];
  const wer = wordErrorRate(SENTENCE, heard.value);
  const good = wer <= MAX_WORD_ERROR_RATE;
  return [
    ...rows,
    sttRow({
      result: good ? 'ok' : 'FAILED',
      detail: `"${heard.value}" (word error rate ${(wer * 100).toFixed(0)}%)`,
      latencyMs: heard.ms,
      setting: good ? '' : 'STT_BASE_URL',
    }),
  ];
}

/** The first turn the recogniser ends in `mulaw` (followed by silence, so that it hears the end). */
async function transcribe(stt: NonNullable<ProvidersConfig['stt']>, timeoutMs: number, mulaw: Buffer): Promise<string> {
  const transcriber = new StreamingTranscriber({ ...stt, connectTimeoutMs: timeoutMs });
  let settle: { resolve(text: string): void; reject(error: Error): void } = { resolve: () => undefined, reject: () => undefined };
  const turn = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  let settled = false;
  turn.then(
    () => (settled = true),
    () => (settled = true),
  );
  const stream = await transcriber.open(
    { provider: 'provider_a', model: transcriberModelFor('provider_a'), language: 'en', turnDetection: 'responsive', endpointingMs: 300, keyterms: [] },
    { onInterim: () => undefined, onTurnEnd: ({ text }) => settle.resolve(text), onError: (error) => settle.reject(error) },
  );
  const timer = setTimeout(
    () => settle.reject(new Error(`no end of turn within ${Math.round((timeoutMs + 10_000) / 1000)} s of the audio`)),
    timeoutMs + 10_000,
  );
  try {
    // In 20 ms frames at the pace of a call, then two seconds of silence.
    const frames = [...chunk(mulaw, 160), ...chunk(mulawSilence(2_000), 160)];
    for (const frame of frames) {
      stream.sendAudio(frame);
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (settled) break;
    }
    return await turn;
  } finally {
    clearTimeout(timer);
    await stream.close().catch(() => undefined);
  }
}

function* chunk(bytes: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** Word-level edit distance over the reference's length, case and punctuation ignored. */
function wordErrorRate(reference: string, heard: string): number {
  const words = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s']/gu, ' ')
      .split(/\s+/)
      .filter(Boolean);
  const ref = words(reference);
  const hyp = words(heard);
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const current = [i];
    for (let j = 1; j <= hyp.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    previous = current;
  }
  return ref.length === 0 ? (hyp.length === 0 ? 0 : 1) : previous[hyp.length]! / ref.length;
}

/** Each language-model provider of the catalog: its default model answers a one-line prompt. */
async function checkLanguageModels(config: ProvidersConfig): Promise<Row[]> {
  const modelFor = languageModels(config.llm, Math.max(config.timeoutMs, 10_000));
  const configured: Record<string, boolean> = { openai: !!config.llm?.openai, azure_openai: !!config.llm?.azureOpenai, local: !!config.llm?.local };
  const rows: Row[] = [];
  for (const provider of CATALOG.llmProviders) {
    const row = { provider: `language model (${provider.id})`, check: `${provider.defaultModel} answers a prompt` };
    if (!configured[provider.id]) {
      rows.push({ ...row, result: 'not configured', detail: '', latencyMs: null, setting: LANGUAGE_MODEL_SETTINGS[provider.id] ?? '' });
      continue;
    }
    const answered = await timed(() =>
      modelFor(provider.id).complete({
        model: provider.defaultModel,
        temperature: 0,
        maxTokens: 16,
        messages: [{ role: 'user', content: 'Reply with one word: ready' }],
      }),
    );
    if ('value' in answered && answered.value.text.trim())
      rows.push({ ...row, result: 'ok', detail: `"${answered.value.text.trim().slice(0, 60)}"`, latencyMs: answered.ms, setting: '' });
    else
      rows.push({
        ...row,
        result: 'FAILED',
        detail: 'value' in answered ? 'an empty answer' : messageOf(answered.error),
        latencyMs: answered.ms,
        setting: 'value' in answered ? LANGUAGE_MODEL_SETTINGS[provider.id]! : settingOf(answered.error, LANGUAGE_MODEL_SETTINGS[provider.id]!),
      });
  }
  return rows;
}

function printTable(rows: Row[]): void {
  const header = ['provider', 'check', 'result', 'latency', 'setting to fix', 'detail'];
  const cells = rows.map((r) => [
    r.provider,
    r.check,
    r.result,
    r.latencyMs === null ? '-' : `${r.latencyMs} ms`,
    r.result === 'ok' ? '' : r.setting,
    r.detail,
  ]);
  const widths = header.slice(0, -1).map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i < widths.length ? v.padEnd(widths[i]!) : v))
      .join('  ')
      .trimEnd();
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w)).concat('------')));
  for (const c of cells) console.log(line(c));
}

async function main(): Promise<void> {
  const config = loadConfig();
  const rows = [
    ...(await checkTelephony(config.providers, config.publicApiUrl)),
    ...(await checkSpeech(config.providers)),
    ...(await checkLanguageModels(config.providers)),
  ];
  printTable(rows);
  const failed = rows.filter((r) => r.result === 'FAILED');
  if (failed.length > 0) {
    const settings = [...new Set(failed.flatMap((r) => r.setting.split(/,\s*/)).filter(Boolean))];
    console.error(`\n${failed.length} check${failed.length > 1 ? 's' : ''} failed: fix ${settings.join(', ')}`);
    process.exitCode = 1;
  } else {
    const unset = rows.filter((r) => r.result === 'not configured').length;
    console.log(`\nevery configured provider answered${unset ? ` (${unset} check${unset > 1 ? 's' : ''} not configured)` : ''}`);
  }
}

main().catch((error: unknown) => {
  // A setting loadConfig refuses (a malformed URL, half a group) is named in its message.
  console.error(`check:providers could not start: ${messageOf(error)}`);
  process.exitCode = 1;
});
