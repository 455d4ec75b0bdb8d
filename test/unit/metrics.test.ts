import { expect } from 'chai';
import { metrics, metricsRegistry, observeConversationLatency, observeWebhookAttempt, providerLabel, statusClass } from '../../domain/shared/metrics';
import { ProviderRefusedError, ProviderUnavailableError } from '../../providers/errors';
import { conversationTelemetry } from '../../media/telemetry';
import { parseExposition, valueOf } from '../support/prometheus-text';

async function scrape() {
  return parseExposition(await metricsRegistry.metrics());
}

describe('the process metrics and their hooks', () => {
  it("counts a tts.first_audio as voice-to-voice, or as the greeting when it is the welcome's, in seconds", async () => {
    const before = await scrape();
    observeConversationLatency({ type: 'tts.first_audio', latencyMs: 640, data: {} });
    observeConversationLatency({ type: 'tts.first_audio', latencyMs: 90, data: { welcome: true } });
    observeConversationLatency({ type: 'llm.first_token', latencyMs: 300, data: {} });
    observeConversationLatency({ type: 'tts.first_audio', latencyMs: null, data: {} });
    const after = await scrape();
    const delta = (name: string, labels = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('voice_agents_voice_to_voice_seconds_count')).to.equal(1);
    expect(delta('voice_agents_voice_to_voice_seconds_sum')).to.be.closeTo(0.64, 1e-9);
    expect(delta('voice_agents_voice_to_voice_seconds_bucket', { le: '0.6' })).to.equal(0);
    expect(delta('voice_agents_voice_to_voice_seconds_bucket', { le: '0.7' })).to.equal(1);
    expect(delta('voice_agents_greeting_seconds_count')).to.equal(1);
    expect(delta('voice_agents_greeting_seconds_bucket', { le: '0.1' })).to.equal(1);
  });

  it('counts every provider failure as it is made, by service and kind, with unknown services as other', async () => {
    const before = await scrape();
    void new ProviderUnavailableError('speech synthesis', 'timed out');
    void new ProviderRefusedError('language model', 'the credentials', 'server setting LLM_OPENAI_API_KEY', 'answered 401');
    void new ProviderUnavailableError('https://example.com/some/url', 'refused');
    const after = await scrape();
    const delta = (labels: Record<string, string>) =>
      valueOf(after, 'voice_agents_provider_errors_total', labels) - valueOf(before, 'voice_agents_provider_errors_total', labels);
    expect(delta({ provider: 'speech_synthesis', kind: 'unavailable' })).to.equal(1);
    expect(delta({ provider: 'language_model', kind: 'refused' })).to.equal(1);
    expect(delta({ provider: 'other', kind: 'unavailable' })).to.equal(1);
    expect(providerLabel('speech recognition')).to.equal('speech_recognition');
    // The series exist before any failure, at zero (rates and alerts see the first one).
    expect(
      before.samples.some((s) => s.name === 'voice_agents_provider_errors_total' && s.labels.provider === 'telephony' && s.labels.kind === 'dial_refused'),
    ).to.equal(true);
  });

  it('keeps the live-calls gauge up while a conversation runs, and down after it ends, failed or not', async () => {
    const live = async () => valueOf(await scrape(), 'voice_agents_live_calls');
    const start = await live();
    const first = conversationTelemetry();
    let during = 0;
    await first.around(async () => {
      during = await live();
    });
    const second = conversationTelemetry();
    await second.around(() => Promise.reject(new Error('the stream broke'))).catch(() => undefined);
    expect(during - start).to.equal(1);
    expect(await live()).to.equal(start);
  });

  it('counts webhook attempts by trigger and outcome, and the lag of delivered ones only', async () => {
    const before = await scrape();
    observeWebhookAttempt({ trigger: 'automatic', outcome: 'delivered', lagMs: 1_500 });
    observeWebhookAttempt({ trigger: 'automatic', outcome: 'retrying', lagMs: null });
    const after = await scrape();
    const delta = (name: string, labels = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('voice_agents_webhook_attempts_total', { trigger: 'automatic', outcome: 'delivered' })).to.equal(1);
    expect(delta('voice_agents_webhook_attempts_total', { trigger: 'automatic', outcome: 'retrying' })).to.equal(1);
    expect(delta('voice_agents_webhook_delivery_lag_seconds_count')).to.equal(1);
    expect(delta('voice_agents_webhook_delivery_lag_seconds_sum')).to.be.closeTo(1.5, 1e-9);
  });

  it('labels answers by status class', () => {
    expect([200, 204, 404, 503].map(statusClass)).to.deep.equal(['2xx', '2xx', '4xx', '5xx']);
    expect(metrics.requestDuration).to.not.equal(undefined);
  });
});
