import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { Providers } from '../providers';
import type { LanguageModel } from '../providers/llm/types';
import type { Synthesizer } from '../providers/tts/types';
import { metrics, observeConversationLatency } from '../domain/shared/metrics';
import { tracer } from '../domain/shared/tracing';

/** What the conversation engine reports, as far as telemetry reads it. */
interface EngineEvent {
  type: string;
  latencyMs: number | null;
  data?: Record<string, unknown>;
}

/**
 * One conversation's telemetry on the media node: the live-calls gauge while it runs, the
 * voice-to-voice and greeting histograms from its `tts.first_audio` events, and a span per
 * turn (from the end of the caller's words to the agent's first audio) under a span for the
 * conversation. No call id or number goes on a span or a label: the trace id links them.
 */
export function conversationTelemetry() {
  metrics.liveCalls.inc();
  const conversation = tracer().startSpan('conversation', { kind: SpanKind.INTERNAL });
  const parent = trace.setSpan(context.active(), conversation);
  let turn: Span | null = null;
  let ended = false;
  return {
    /** The context provider requests of this conversation run under (their spans are its children). */
    context: parent,
    event(event: EngineEvent): void {
      observeConversationLatency(event);
      if (event.type === 'user.turn') {
        turn?.end();
        turn = tracer().startSpan('conversation.turn', {}, parent);
      } else if (event.type === 'llm.first_token' && turn) {
        turn.addEvent('llm.first_token', { 'voice_agents.latency_ms': event.latencyMs ?? 0 });
      } else if (event.type === 'tts.first_audio' && !event.data?.welcome && turn) {
        turn.setAttribute('voice_agents.voice_to_voice_ms', event.latencyMs ?? 0);
        turn.end();
        turn = null;
      } else if (event.type === 'tts.first_audio' && event.data?.welcome) {
        conversation.setAttribute('voice_agents.greeting_ms', event.latencyMs ?? 0);
      }
    },
    /** A speculative reply used or dropped (docs/decisions/0227): counted, and marked on the turn's span. */
    speculation(outcome: 'used' | 'dropped'): void {
      metrics.speculativeReplies.inc({ outcome });
      turn?.addEvent('speculative_reply', { 'voice_agents.outcome': outcome });
    },
    /** Runs the conversation under its span and ends the telemetry with it, however it ends. */
    async around<T>(run: () => Promise<T>): Promise<T> {
      let failed = true;
      try {
        const result = await context.with(parent, run);
        failed = false;
        return result;
      } finally {
        this.end(failed);
      }
    },
    end(failed: boolean): void {
      if (ended) return;
      ended = true;
      metrics.liveCalls.dec();
      turn?.end();
      if (failed) conversation.setStatus({ code: SpanStatusCode.ERROR });
      conversation.end();
    },
  };
}

/** A span around each of a stream's requests, from the request to its last piece (a provider's streaming answer). */
async function* tracedStream<T>(name: string, attributes: Record<string, string>, stream: () => AsyncIterable<T>): AsyncIterable<T> {
  const span = tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes });
  let first = true;
  try {
    for await (const piece of stream()) {
      if (first) span.addEvent('first_piece');
      first = false;
      yield piece;
    }
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

/** The synthesizer with a span per request (`tts.synthesize`). */
export function tracedSynthesizer(synthesizer: Synthesizer): Synthesizer {
  return {
    listVoices: () => synthesizer.listVoices(),
    synthesize: (request) => tracedStream('tts.synthesize', { 'voice_agents.provider': 'speech_synthesis' }, () => synthesizer.synthesize(request)),
  };
}

/** The language model with a span per request (`llm.stream`, `llm.complete`). */
export function tracedLanguageModel(model: LanguageModel): LanguageModel {
  return {
    stream: (request) => tracedStream('llm.stream', { 'voice_agents.provider': 'language_model' }, () => model.stream(request)),
    complete: (request) =>
      tracer().startActiveSpan('llm.complete', { kind: SpanKind.CLIENT, attributes: { 'voice_agents.provider': 'language_model' } }, async (span) => {
        try {
          return await model.complete(request);
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      }),
  };
}

/** The media node's providers with spans around speech synthesis and the language model (only when tracing is on: no wrapper otherwise). */
export function tracedProviders(providers: Providers): Providers {
  return {
    ...providers,
    synthesizer: tracedSynthesizer(providers.synthesizer),
    languageModelFor: (provider) => tracedLanguageModel(providers.languageModelFor(provider)),
  };
}
