import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { ProviderNotConfiguredError, ProviderRefusedError, ProviderUnavailableError } from '../../providers/errors';
import type { LanguageModel } from '../../providers/llm/types';
import { findByIdOwned } from '../../db/by-id';
import type { AgentExtraction } from '../../db/models/agent';
import { Call, type CallDocument } from '../../db/models/call';
import { Agent } from '../../db/models/agent';
import { recordEvent } from '../../domain/webhooks/fan-out';
import type { Clock } from '../clock';
import { completedCallRecord, transcriptText } from '../../domain/calls/call-record';
import { dataStorageOf } from '../../contracts/data-storage';
import { reduceCallAfterCompletion } from '../../domain/privacy/data-storage';
import { extractedValues, extractionInstructions, parseExtractionAnswer } from '../../domain/calls/extraction-values';

export interface AnalyticsDeps {
  clock: Clock;
  /** Starts the webhook deliveries of `call.completed`. */
  temporal?: Client;
  /** The language model of an agent's `llm.provider` (catalog ids: openai, local, azure_openai). */
  languageModelFor?: (provider: string) => LanguageModel;
}

export interface AnalyzeCallInput {
  callId: string;
  workspaceId: string;
  agentId: string;
}

/** What analyzeCall saved on the call (null: not asked for). */
export interface CallAnalytics {
  summary: string | null;
  extracted: Record<string, unknown> | null;
}

export interface CompleteCallInput extends AnalyzeCallInput {
  /** The timeline sequence of `call.completed` (from the call workflow). */
  sequence: number;
  /** The analytics failure to record as `analytics_error`; null when analytics succeeded. */
  error: string | null;
}

/** Room for 1 to 3 sentences. */
const SUMMARY_MAX_TOKENS = 300;
/** Room for up to 50 extracted values, lists included. */
const EXTRACTION_MAX_TOKENS = 2_000;

const SUMMARY_INSTRUCTIONS =
  'You summarize phone calls between a voice agent (assistant) and a caller (user). ' +
  'Write a summary of the call in 1 to 3 short sentences: why the caller talked to the agent, what was said or agreed, and how the call ended. ' +
  'Answer with the summary only.';

interface AnalyticsAgent {
  workspace_id: string;
  llm: { provider: string; model: string; temperature: number };
  analytics: { summarize: boolean; extractions: AgentExtraction[]; extraction_prompt: string };
}

/**
 * Post-call analytics (`analytics-<call_id>`): the summary and the extractions through the
 * agent's language model, saved on the call, then `call.completed`. A failure of the model
 * (an error answer, or extractions that are not JSON) throws, so that the workflow retries it.
 */
export function createAnalyticsActivities(deps: AnalyticsDeps) {
  const modelOf = (provider: string): LanguageModel => {
    if (!deps.languageModelFor) throw ApplicationFailure.nonRetryable('no language model is configured in this worker', 'LanguageModelNotConfigured');
    return deps.languageModelFor(provider);
  };

  return {
    /**
     * Summary (when `analytics.summarize`) and extractions (when the agent declares any, or has
     * an `extraction_prompt`), saved on the call by id. A call whose agent is gone, or whose
     * agent asks for neither, gets nothing and no model request.
     */
    async analyzeCall(input: AnalyzeCallInput): Promise<CallAnalytics> {
      const nothing: CallAnalytics = { summary: null, extracted: null };
      const [call, agent] = await Promise.all([
        findByIdOwned<Pick<CallDocument, 'transcript'>>(Call, input.callId, { workspace_id: input.workspaceId }, { transcript: 1 }),
        findByIdOwned<AnalyticsAgent>(Agent, input.agentId, { workspace_id: input.workspaceId }, { llm: 1, analytics: 1 }),
      ]);
      if (!call || !agent) return nothing;
      const { summarize, extractions, extraction_prompt: extractionPrompt } = agent.analytics;
      const wantsExtractions = extractions.length > 0 || extractionPrompt.trim() !== '';
      if (!summarize && !wantsExtractions) return nothing;

      const model = modelOf(agent.llm.provider);
      const ask = async (system: string, maxTokens: number, jsonObject: boolean) => {
        try {
          const reply = await model.complete({
            model: agent.llm.model,
            temperature: agent.llm.temperature,
            maxTokens,
            jsonObject,
            messages: [
              { role: 'system', content: system },
              { role: 'user', content: `Transcript:\n${transcriptText(call.transcript ?? []) || '(nothing was said)'}` },
            ],
          });
          return reply.text;
        } catch (error) {
          if (error instanceof ProviderUnavailableError) throw new Error(`the language model did not answer: ${error.reason}`);
          // A setting must change first (docs/decisions/0097, 0190): retrying only delays call.completed.
          if (error instanceof ProviderNotConfiguredError || error instanceof ProviderRefusedError)
            throw ApplicationFailure.nonRetryable(error.message, error.name);
          throw new Error(`the language model failed: ${(error as Error).message}`);
        }
      };

      const [summary, extracted] = await Promise.all([
        summarize ? ask(SUMMARY_INSTRUCTIONS, SUMMARY_MAX_TOKENS, false).then(summaryOf) : null,
        wantsExtractions
          ? ask(extractionInstructions(extractions, extractionPrompt), EXTRACTION_MAX_TOKENS, true).then((text) =>
              extractedValues(parseExtractionAnswer(text), extractions),
            )
          : null,
      ]);
      await Call.updateOne({ _id: input.callId }, { $set: { summary, extracted, analytics_error: null, updated_at: deps.clock.now() } });
      return { summary, extracted };
    },

    /**
     * Records `error` (if any) as the call's `analytics_error`, then `call.completed` with the
     * final record. Safe to retry: the event id comes from the call and `sequence`.
     */
    async completeCall(input: CompleteCallInput): Promise<{ eventId: string }> {
      if (!deps.temporal) throw ApplicationFailure.nonRetryable('completeCall needs a Temporal client in the worker dependencies', 'TemporalNotConfigured');
      if (input.error !== null) await Call.updateOne({ _id: input.callId }, { $set: { analytics_error: input.error, updated_at: deps.clock.now() } });
      const call = await findByIdOwned<CallDocument>(Call, input.callId, { workspace_id: input.workspaceId });
      if (!call) throw ApplicationFailure.nonRetryable(`call ${input.callId} does not exist`, 'CallNotFound');
      const { eventId } = await recordEvent(
        {
          workspaceId: input.workspaceId,
          callId: input.callId,
          agentId: input.agentId,
          sequence: input.sequence,
          type: 'call.completed',
          message: input.error ? 'call completed without analytics' : 'call completed',
          level: 'info',
          latencyMs: null,
          data: { call: completedCallRecord(call) },
          createdAt: deps.clock.now().toISOString(),
        },
        { temporal: deps.temporal, now: () => deps.clock.now() },
      );
      // call.completed carries the whole record; what the call keeps of it is reduced now (0213).
      await reduceCallAfterCompletion(input.callId, dataStorageOf(call.data_storage), deps.clock.now());
      return { eventId };
    },
  };
}

function summaryOf(text: string): string {
  const summary = text.trim();
  if (!summary) throw new Error('the language model answered an empty summary');
  return summary;
}
