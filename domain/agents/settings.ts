import { agentDefaults, llmProvider, transcriberModelFor, ttsProvider } from './catalog';
import type { AgentExtraction, AgentSettings, AgentTool, AgentTransfer } from '../../db/models/agent';
import { canonicalTimeZone } from '../shared/time';
import type { components } from '../../schemas/api-types';

export type AgentInput = components['schemas']['AgentInput'];
type ToolInput = components['schemas']['AgentTool'];
type ExtractionInput = components['schemas']['AgentExtraction'];

/** A tool without `parameters` takes no arguments. */
const NO_ARGUMENTS = { type: 'object', properties: {} };

/**
 * The complete settings an Agent body asks for: every field left out takes its default from
 * the catalog (a PUT replaces the whole agent), except `phone_number`, which keeps
 * `currentPhoneNumber` when left out. `transcriber.model` always follows the provider (a
 * value sent is ignored); `call.timezone` takes its usual spelling. Rules that need the
 * catalog or the workspace are checked afterwards (`rules.ts`).
 */
export function settingsFromInput(input: AgentInput, currentPhoneNumber: string | null): AgentSettings {
  const defaults = agentDefaults();
  const llmProviderId = input.llm?.provider ?? defaults.llm.provider;
  const voiceProviderId = input.voice?.provider ?? defaults.voice.provider;
  const transcriberProvider = input.transcriber?.provider ?? defaults.transcriber.provider;
  const call = { ...defaults.call, ...input.call };
  return {
    name: input.name,
    welcome_message: input.welcome_message ?? defaults.welcome_message,
    system_prompt: input.system_prompt ?? defaults.system_prompt,
    llm: {
      ...defaults.llm,
      ...input.llm,
      provider: llmProviderId,
      // An unknown provider has no default model; the rules report the provider.
      model: input.llm?.model ?? llmProvider(llmProviderId)?.defaultModel ?? '',
    },
    voice: {
      ...defaults.voice,
      ...input.voice,
      provider: voiceProviderId,
      model: input.voice?.model ?? ttsProvider(voiceProviderId)?.defaultModel ?? '',
    },
    transcriber: { ...defaults.transcriber, ...input.transcriber, provider: transcriberProvider, model: transcriberModelFor(transcriberProvider) },
    call: {
      ...call,
      timezone: canonicalTimeZone(call.timezone) ?? call.timezone,
      keypad: { ...defaults.call.keypad, ...input.call?.keypad },
      voicemail: { ...defaults.call.voicemail, ...input.call?.voicemail },
      transfer: transferOf(input.call?.transfer, defaults.call.transfer),
    },
    analytics: {
      summarize: input.analytics?.summarize ?? defaults.analytics.summarize,
      extractions: (input.analytics?.extractions ?? []).map(extractionOf),
      extraction_prompt: input.analytics?.extraction_prompt ?? defaults.analytics.extraction_prompt,
    },
    tools: (input.tools ?? []).map(toolOf),
    knowledge_base_ids: input.knowledge_base_ids ?? defaults.knowledge_base_ids,
    webhook_url: input.webhook_url ?? defaults.webhook_url,
    phone_number: 'phone_number' in input ? (input.phone_number ?? null) : currentPhoneNumber,
    status: input.status ?? defaults.status,
  };
}

/** `call.transfer` with its defaults (docs/decisions/0160); each destination's `mode` defaults to cold. */
function transferOf(input: NonNullable<AgentInput['call']>['transfer'], defaults: AgentTransfer): AgentTransfer {
  return {
    destinations: (input?.destinations ?? defaults.destinations).map((d) => ({ number: d.number, description: d.description, mode: d.mode ?? 'cold' })),
    handover_message: input?.handover_message ?? defaults.handover_message,
    ring_timeout_seconds: input?.ring_timeout_seconds ?? defaults.ring_timeout_seconds,
  };
}

function toolOf(tool: ToolInput): AgentTool {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters ?? NO_ARGUMENTS,
    method: tool.method ?? 'POST',
    url: tool.url,
    headers: tool.headers ?? {},
    pre_call_message: tool.pre_call_message ?? '',
    timeout_seconds: tool.timeout_seconds ?? 8,
  };
}

function extractionOf(item: ExtractionInput): AgentExtraction {
  return {
    key: item.key,
    label: item.label ?? '',
    type: item.type ?? 'text',
    description: item.description ?? '',
    choices: (item.choices ?? []).map((c) => ({ value: c.value, when: c.when ?? '' })),
  };
}
