/**
 * The static catalog: which language-model, speech-synthesis and speech-recognition providers
 * and models the service offers, which plans may use which language-model providers, and the
 * service's defaults for every agent field (contract, "Agent"). The catalog endpoints serve
 * this data, agent validation checks against it, and an agent's defaults come only from here.
 *
 * Provider ids:
 * - language models: `openai` (OpenAI's API; the model ids are OpenAI's), `local` (any
 *   OpenAI-compatible server; `local-chat` is sent as the server's own model name,
 *   LLM_LOCAL_MODEL), `azure_openai` (dedicated Azure OpenAI deployments; Growth and Scale
 *   plans only). Each is configured on its own (config/env.ts, docs/decisions/0190).
 * - speech synthesis: `openai` and `local` (the local simulator).
 * - speech recognition: `provider_a` (detects language and end of turn) and `provider_b`
 *   (fixed language, silence-based endpointing), the contract's neutral names for Deepgram's
 *   Flux (`/v2/listen`) and its `/v1/listen` streaming. Their models are Deepgram's real ids,
 *   which Deepgram checks when the stream opens (decision 0180): `flux-general-multi`, the
 *   Flux model that detects the language (`flux-general-en` does not), and `nova-3`, which
 *   has monolingual models for Hindi, Indian English and most Indian languages the console
 *   offers (nova-2 has Hindi but not Tamil, Telugu, Marathi and the others).
 */
import type { DataStorage } from '../../contracts/data-storage';

export interface CatalogModel {
  id: string;
  name: string;
}

export interface LlmProvider {
  id: string;
  name: string;
  models: readonly CatalogModel[];
  defaultModel: string;
  /** Plan ids whose workspaces may use this provider. */
  plans: readonly string[];
}

export interface TtsProvider {
  id: string;
  name: string;
  models: readonly CatalogModel[];
  defaultModel: string;
}

/** Transcriber settings that only some speech-recognition providers honour. */
export const TRANSCRIBER_SETTINGS = ['turn_detection', 'language', 'endpointing_ms', 'keyterms'] as const;
export type TranscriberSetting = (typeof TRANSCRIBER_SETTINGS)[number];

export interface TranscriberProvider {
  id: 'provider_a' | 'provider_b';
  name: string;
  /** The one model of the provider; an agent's `transcriber.model` is always this. */
  model: string;
  /** The settings this provider uses; the others are kept on the agent but ignored on calls. */
  settings: readonly TranscriberSetting[];
}

const ALL_PLANS = ['starter', 'growth', 'scale'] as const;

export const CATALOG = {
  llmProviders: [
    {
      id: 'openai',
      name: 'OpenAI',
      models: [
        { id: 'gpt-4o-mini', name: 'GPT-4o mini' },
        { id: 'gpt-4o', name: 'GPT-4o' },
        { id: 'gpt-4.1-mini', name: 'GPT-4.1 mini' },
        { id: 'gpt-4.1', name: 'GPT-4.1' },
      ],
      defaultModel: 'gpt-4o-mini',
      plans: ALL_PLANS,
    },
    {
      id: 'local',
      name: 'OpenAI-compatible server',
      models: [{ id: 'local-chat', name: 'Local chat model' }],
      defaultModel: 'local-chat',
      plans: ALL_PLANS,
    },
    {
      id: 'azure_openai',
      name: 'Azure OpenAI (dedicated)',
      models: [
        { id: 'gpt-4o-mini', name: 'GPT-4o mini' },
        { id: 'gpt-4o', name: 'GPT-4o' },
      ],
      defaultModel: 'gpt-4o-mini',
      plans: ['growth', 'scale'],
    },
  ],
  ttsProviders: [
    {
      id: 'openai',
      name: 'OpenAI',
      models: [
        { id: 'gpt-4o-mini-tts', name: 'GPT-4o mini TTS' },
        { id: 'tts-1', name: 'TTS 1' },
        { id: 'tts-1-hd', name: 'TTS 1 HD' },
      ],
      defaultModel: 'gpt-4o-mini-tts',
    },
    {
      id: 'local',
      name: 'Local speech synthesis',
      models: [{ id: 'local-tts', name: 'Local TTS' }],
      defaultModel: 'local-tts',
    },
  ],
  transcriberProviders: [
    { id: 'provider_a', name: 'Provider A', model: 'flux-general-multi', settings: ['turn_detection', 'keyterms'] },
    { id: 'provider_b', name: 'Provider B', model: 'nova-3', settings: ['language', 'endpointing_ms', 'keyterms'] },
  ],
} as const satisfies {
  llmProviders: readonly LlmProvider[];
  ttsProviders: readonly TtsProvider[];
  transcriberProviders: readonly TranscriberProvider[];
};

export type TranscriberProviderId = (typeof CATALOG.transcriberProviders)[number]['id'];

export const defaultLlmProvider = 'openai';
export const defaultTtsProvider = 'openai';
export const defaultTranscriberProvider: TranscriberProviderId = 'provider_a';

/** The catalog's `llm_models`: every language model with its provider. */
export function llmModels(): { provider: string; id: string; name: string }[] {
  return CATALOG.llmProviders.flatMap((p) => p.models.map((m) => ({ provider: p.id, id: m.id, name: m.name })));
}

/** The catalog's `tts_models`: every speech-synthesis model with its provider. */
export function ttsModels(): { provider: string; id: string; name: string }[] {
  return CATALOG.ttsProviders.flatMap((p) => p.models.map((m) => ({ provider: p.id, id: m.id, name: m.name })));
}

export function llmProvider(id: string): LlmProvider | undefined {
  return CATALOG.llmProviders.find((p) => p.id === id);
}

export function ttsProvider(id: string): TtsProvider | undefined {
  return CATALOG.ttsProviders.find((p) => p.id === id);
}

/** Language-model provider ids the workspaces of this plan may use. */
export function llmProvidersAllowed(plan: string): string[] {
  return CATALOG.llmProviders.filter((p) => (p.plans as readonly string[]).includes(plan)).map((p) => p.id);
}

export function transcriberModelFor(provider: string): string {
  const found = CATALOG.transcriberProviders.find((p) => p.id === provider);
  if (!found) throw new Error(`unknown transcriber provider "${provider}"`);
  return found.model;
}

/** The settings the provider uses (see `TranscriberProvider.settings`). */
export function transcriberSettingsFor(provider: string): readonly TranscriberSetting[] {
  const found = CATALOG.transcriberProviders.find((p) => p.id === provider);
  if (!found) throw new Error(`unknown transcriber provider "${provider}"`);
  return found.settings;
}

export const TURN_DETECTION_MODES = ['responsive', 'balanced', 'patient'] as const;
export const EXTRACTION_TYPES = ['text', 'number', 'boolean', 'choice', 'date', 'list'] as const;
export const TOOL_METHODS = ['GET', 'POST'] as const;
export const AGENT_STATUSES = ['active', 'paused'] as const;

/** The defaults of the Agent table for every field but `name`, in the contract's nested shape. */
export function agentDefaults() {
  const llm = llmProvider(defaultLlmProvider);
  const tts = ttsProvider(defaultTtsProvider);
  if (!llm || !tts) throw new Error('the catalog lacks its default providers');
  return {
    welcome_message: '',
    system_prompt: '',
    llm: { provider: llm.id, model: llm.defaultModel, temperature: 0.4, max_tokens: 300 },
    voice: {
      provider: tts.id,
      model: tts.defaultModel,
      voice_id: null as string | null,
      voice_name: null as string | null,
      language: 'hi',
      speed: 1,
    },
    transcriber: {
      provider: defaultTranscriberProvider as TranscriberProviderId,
      model: transcriberModelFor(defaultTranscriberProvider),
      turn_detection: 'balanced' as (typeof TURN_DETECTION_MODES)[number],
      language: 'hi',
      endpointing_ms: 300,
      keyterms: [] as string[],
      speculative_replies: false,
    },
    call: {
      max_duration_seconds: 600,
      hangup_after_silence_seconds: 15,
      allow_interruptions: true,
      interruption_min_words: 2,
      call_start_hour: 9,
      call_end_hour: 21,
      timezone: 'Asia/Kolkata',
      record: true,
      hangup_message: '',
      hangup_on_prompt: false,
      hangup_prompt: '',
      hangup_interruptible: false,
      check_user_online: false,
      user_online_message: 'Are you still there?',
      user_online_after_seconds: 9,
      keypad: { press_digits: false, caller_digits: false },
      voicemail: { detect: false, action: 'hang_up' as 'hang_up' | 'leave_message', message: '' },
      transfer: { destinations: [] as { number: string; description: string; mode: 'cold' | 'warm' }[], handover_message: '', ring_timeout_seconds: 30 },
      // New agents honour "do not call me again" (TRAI's rules; docs/decisions/0206); stored ones keep what they have.
      opt_out: true,
      opt_out_message: '',
      data_storage: 'everything' as DataStorage,
    },
    analytics: { summarize: false, extractions: [] as unknown[], extraction_prompt: '' },
    tools: [] as unknown[],
    knowledge_base_ids: [] as string[],
    webhook_url: null as string | null,
    phone_number: null as string | null,
    status: 'active' as (typeof AGENT_STATUSES)[number],
  };
}

export type AgentDefaults = ReturnType<typeof agentDefaults>;
