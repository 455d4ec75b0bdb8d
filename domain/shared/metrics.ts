import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { onProviderError, type ProviderErrorKind } from '../../providers/errors';
import type { AttemptTrigger } from '../../contracts/webhooks';

/**
 * The process's Prometheus metrics (docs/observability.md). Every process defines all of them
 * (a metric a process never touches stays at zero or without series), so that one scrape
 * configuration and one dashboard fit every role. Labels are bounded sets chosen here: an
 * operationId of the OpenAPI document, a status class, an outcome; never a call id, a phone
 * number or a URL.
 */
export const metricsRegistry = new Registry();

/** Seconds, for histograms of what a caller hears: fine below a second, where the targets are. */
const LATENCY_BUCKETS = [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1, 1.25, 1.5, 2, 3, 5, 10];

export const metrics = {
  /** API requests by the OpenAPI operationId the access step identified (`unmatched` for none). */
  requestDuration: new Histogram({
    name: 'voice_agents_http_request_duration_seconds',
    help: 'API request latency by OpenAPI operation, from the request to the last byte of the response',
    labelNames: ['operation', 'method', 'status_class'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [metricsRegistry],
  }),
  /** Conversations running on this media node now. */
  liveCalls: new Gauge({
    name: 'voice_agents_live_calls',
    help: 'Conversations running on this media node',
    registers: [metricsRegistry],
  }),
  /** Outbound calls waiting for a concurrency slot, all workspaces (read from MongoDB at scrape time by the API). */
  queuedCalls: new Gauge({
    name: 'voice_agents_queued_calls',
    help: 'Calls in status queued (waiting for a slot), all workspaces',
    registers: [metricsRegistry],
  }),
  /** From a call's placement to the moment a slot let it be dialled. */
  slotWait: new Histogram({
    name: 'voice_agents_slot_wait_seconds',
    help: 'How long a queued call waited for a concurrency slot before it could be dialled',
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [metricsRegistry],
  }),
  /** From the end of the caller's words to the first audio of the agent's answer. */
  voiceToVoice: new Histogram({
    name: 'voice_agents_voice_to_voice_seconds',
    help: "From the end of the caller's turn to the first audio of the agent's answer, per turn",
    buckets: LATENCY_BUCKETS,
    registers: [metricsRegistry],
  }),
  /** From the conversation's start (the stream opened) to the first audio of the welcome. */
  greeting: new Histogram({
    name: 'voice_agents_greeting_seconds',
    help: 'From the start of the conversation to the first audio of the welcome message',
    buckets: [0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5],
    registers: [metricsRegistry],
  }),
  /** Speculative replies (docs/decisions/0227) by outcome: `used` (the turn ended as guessed) or `dropped` (the caller went on: a model request wasted). */
  speculativeReplies: new Counter({
    name: 'voice_agents_speculative_replies_total',
    help: "Replies started on the recognizer's early end of turn, by whether the turn ended as guessed (used) or the caller went on (dropped)",
    labelNames: ['outcome'] as const,
    registers: [metricsRegistry],
  }),
  /** Webhook attempts by what they left the delivery as: `delivered`, `retrying` or `failed`. */
  webhookAttempts: new Counter({
    name: 'voice_agents_webhook_attempts_total',
    help: 'Webhook delivery attempts by trigger and the status they left the delivery in',
    labelNames: ['trigger', 'outcome'] as const,
    registers: [metricsRegistry],
  }),
  /** A delivered webhook's age: from its delivery's creation (the event) to the receiver's answer. */
  webhookLag: new Histogram({
    name: 'voice_agents_webhook_delivery_lag_seconds',
    help: "From a webhook delivery's creation to the receiver's 2xx answer",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600],
    registers: [metricsRegistry],
  }),
  /** Failures of outside providers, by service and kind. */
  providerErrors: new Counter({
    name: 'voice_agents_provider_errors_total',
    help: 'Failures of outside providers by service (telephony, speech_recognition, ...) and kind',
    labelNames: ['provider', 'kind'] as const,
    registers: [metricsRegistry],
  }),
};

/** The provider services our adapters name; anything else is `other`, so the label stays bounded. */
const PROVIDER_SERVICES = new Set(['telephony', 'speech_recognition', 'speech_synthesis', 'language_model', 'payment_gateway', 'embeddings']);

export function providerLabel(service: string): string {
  const label = service.toLowerCase().replace(/[^a-z]+/g, '_');
  return PROVIDER_SERVICES.has(label) ? label : 'other';
}

onProviderError((service: string, kind: ProviderErrorKind) => metrics.providerErrors.inc({ provider: providerLabel(service), kind }));

// Every series of the bounded counters starts at zero, so that a rate over the first failure is
// seen (a series born at 1 has no increase to rate) and alerts have something to compare.
for (const provider of [...PROVIDER_SERVICES, 'other'])
  for (const kind of ['unavailable', 'refused', 'dial_refused', 'not_configured'] satisfies ProviderErrorKind[])
    metrics.providerErrors.inc({ provider, kind }, 0);
for (const outcome of ['used', 'dropped']) metrics.speculativeReplies.inc({ outcome }, 0);
for (const trigger of ['automatic', 'manual', 'test'] satisfies AttemptTrigger[])
  for (const outcome of ['delivered', 'retrying', 'failed']) metrics.webhookAttempts.inc({ trigger, outcome }, 0);

/** The status class of an HTTP answer (`2xx`): bounded where the status itself would do too, and what alerts group by. */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** The media node's hook: what the conversation engine reports of a caller's latency. */
export function observeConversationLatency(event: { type: string; latencyMs: number | null; data?: Record<string, unknown> }): void {
  if (event.type !== 'tts.first_audio' || event.latencyMs === null) return;
  (event.data?.welcome ? metrics.greeting : metrics.voiceToVoice).observe(event.latencyMs / 1000);
}

/** The webhook attempt's hook: its outcome and, once delivered, the delivery's lag. */
export function observeWebhookAttempt(attempt: { trigger: string; outcome: string; lagMs: number | null }): void {
  metrics.webhookAttempts.inc({ trigger: attempt.trigger, outcome: attempt.outcome });
  if (attempt.lagMs !== null) metrics.webhookLag.observe(Math.max(0, attempt.lagMs) / 1000);
}
