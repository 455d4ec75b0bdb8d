import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { wavHeader } from '../../media/audio/wav';
import { pcm16ToBytes } from '../../providers/audio/pcm';
import { speakText } from '../../simulators/simulated-speech';
import { activeOwner, withJson, type SignedUp } from '../support/accounts';
import { startApi, type RunningApi } from '../support/api';
import { startTestProviders, type TestProviders } from '../support/providers';
import { until } from '../support/until';
import { agentsClient } from '../api/agents/helpers';

/** Debian's chromium (scripts/setup.sh installs it). */
const CHROMIUM = '/usr/bin/chromium';
/** The fake microphone's file: 48 kHz is what Chrome captures at, so it plays unresampled. */
const WAV_SAMPLE_RATE = 48_000;
const CALLER_LINE = 'Hello agent, I need help';
const WELCOME = 'Hello, this is Asha.';

interface PageCall {
  state: string;
  transcript: { role: string; text: string; interrupted: boolean }[];
  playedSamples: number;
  receivedSamples: number;
  sentFrames: number;
  endedReason: string | null;
  error: string | null;
}

/** The fake microphone: silence while the welcome plays, the caller's line as simulated speech, then silence for the end of the turn. */
function callerWav(file: string): void {
  const silence = (seconds: number) => new Int16Array(Math.round(seconds * WAV_SAMPLE_RATE));
  const parts = [silence(3), speakText(CALLER_LINE, { sampleRate: WAV_SAMPLE_RATE }), silence(3)];
  const samples = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    samples.set(part, at);
    at += part.length;
  }
  const data = pcm16ToBytes(samples);
  fs.writeFileSync(file, Buffer.concat([wavHeader({ sampleRate: WAV_SAMPLE_RATE, channels: 1, dataBytes: data.length }), data]));
}

/**
 * The browser call page in a real browser: headless Chromium (Debian's, driven by
 * playwright-core) with a fake microphone playing a WAV of simulated speech. The page
 * captures it through Web Audio, downsamples to 8 kHz, encodes mu-law and streams it to the
 * media node; it plays the agent's audio and shows the transcript. Real API, workers, media
 * service and simulators behind it.
 */
describe('the browser call page in headless Chromium', function () {
  this.timeout(120_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let browser: Browser;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'browser-call-'));
  const wav = path.join(dir, 'caller.wav');

  before(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run npm run setup (it installs Debian's chromium)`);
    callerWav(wav);
    providers = await startTestProviders();
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
    owner = await activeOwner(api, { name: 'Asha Rao' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-audio-capture=${wav}%noloop`,
        '--autoplay-policy=no-user-gesture-required',
        '--no-sandbox',
      ],
    });
  });
  after(async () => {
    await browser?.close();
    await api?.close();
    await providers?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const callState = (page: Page) => page.evaluate(() => (globalThis as unknown as { voiceCall: PageCall }).voiceCall);
  const timeline = async (id: string): Promise<{ type: string; message: string }[]> =>
    (await api.request(`/api/v1/calls/${id}/events`, { headers: owner.auth })).json();

  it("connects, plays the welcome, sends the microphone's speech, shows both sides of the transcript; Hang up ends the call", async () => {
    const agent = await agentsClient(api, owner.auth).created({ name: 'Asha', welcome_message: WELCOME, voice: { voice_id: 'meera', language: 'en-IN' } });
    const res = await api.request('/api/v1/calls/browser', withJson('POST', { agent_id: agent.id }, owner.auth));
    expect(res.status, await res.clone().text()).to.equal(201);
    const answer = (await res.json()) as { call_id: string; page_url: string };

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${answer.page_url}&autostart=1`);
    await page.waitForFunction(() => (globalThis as unknown as { voiceCall: PageCall }).voiceCall.state === 'live', undefined, { timeout: 10_000 });

    // The welcome plays (samples played through the AudioContext) and is on the transcript.
    await page.waitForFunction(() => (globalThis as unknown as { voiceCall: PageCall }).voiceCall.playedSamples > 8000, undefined, { timeout: 15_000 });
    await page.locator('#transcript li.assistant').first().waitFor({ timeout: 15_000 });
    expect(await page.locator('#transcript li.assistant').first().textContent()).to.equal(WELCOME);

    // The fake microphone's line, recognized from the page's mu-law frames.
    await page.locator('#transcript li.user').first().waitFor({ timeout: 30_000 });
    expect(await page.locator('#transcript li.user').first().textContent()).to.equal(CALLER_LINE);
    await page.locator('#transcript li.assistant').nth(1).waitFor({ timeout: 15_000 });
    expect(await page.locator('#transcript li.assistant').nth(1).textContent()).to.equal(`You said: ${CALLER_LINE}. How can I help further?`);
    const state = await callState(page);
    expect(state.sentFrames).to.be.above(100);
    expect(state.transcript.map((t) => [t.role, t.text])).to.deep.equal([
      ['assistant', WELCOME],
      ['user', CALLER_LINE],
      ['assistant', `You said: ${CALLER_LINE}. How can I help further?`],
    ]);
    const events = await timeline(answer.call_id);
    expect(events.filter((e) => e.type === 'user.turn').map((e) => e.message)).to.deep.equal([CALLER_LINE]);

    await page.click('#hangup');
    expect((await callState(page)).state).to.equal('ended');
    const ended = await until(
      () => timeline(answer.call_id),
      (list) => list.some((e) => e.type === 'call.completed'),
      60_000,
    );
    expect(ended.find((e) => e.type === 'call.ended')!.message).to.equal('ended by caller: the caller hung up');
    expect(problems, 'errors on the page').to.deep.equal([]);
    await page.close();
  });

  it('a link whose token is not good (expired, or for another call) fails with a message and no call audio', async () => {
    const page = await browser.newPage();
    await page.goto(`${api.media!.url}/browser?call=${'0'.repeat(32)}&token=not-a-token&autostart=1`);
    await page.waitForFunction(() => (globalThis as unknown as { voiceCall: PageCall }).voiceCall.state === 'failed', undefined, { timeout: 10_000 });
    const state = await callState(page);
    expect(state.error).to.match(/could not connect; the link may have expired/);
    expect(state.sentFrames).to.equal(0);
    expect(await page.locator('#status').textContent()).to.match(/^The call failed/);
    expect(await page.locator('#start').isDisabled()).to.equal(true);
    await page.close();
  });
});
