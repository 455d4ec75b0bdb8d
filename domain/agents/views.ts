import {
  toolOf,
  type AgentSettings,
  type AgentTool,
  type StoredAgentTool,
  type AgentTransfer,
  type StoredAgent,
  type StoredAgentSettings,
} from '../../db/models/agent';
import type { StoredAgentVersion } from '../../db/models/agent-version';
import type { components } from '../../schemas/api-types';
import { transcriberModelFor } from './catalog';
import { maskedHeaders } from './tool-headers';

// Typed from the settings model (the generated type of a free-form `parameters` object is
// unusable); the key check below keeps it in step with the OpenAPI schema.
type AgentView = AgentSettings & { id: string; variables: string[]; version: number; updated_by: string; created_at: Date; updated_at: Date };
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : never) : never;
const agentViewMatchesSchema: SameKeys<AgentView, components['schemas']['Agent']> = true;
void agentViewMatchesSchema;

/** An agent on the wire: its settings, `variables` and the read-only fields; tools' header values masked (0195). */
export function agentView(agent: StoredAgent): AgentView {
  return {
    id: agent._id,
    ...settingsView(agent, maskedTool),
    version: agent.version,
    updated_by: agent.updated_by,
    created_at: agent.created_at,
    updated_at: agent.updated_at,
  };
}

/** A kept version on the wire: the agent as it was saved then (its `created_at` never changes). */
export function versionView(agent: StoredAgent, version: StoredAgentVersion): AgentView {
  return {
    id: agent._id,
    ...settingsView(version.settings, maskedTool),
    version: version.version,
    updated_by: version.updated_by,
    created_at: agent.created_at,
    updated_at: version.updated_at,
  };
}

/** The settings a stored agent or version holds, as a body for saving them again: header values opened, for sealing again. */
export function settingsFromStored(stored: StoredAgentSettings): AgentSettings {
  const { variables: _derived, ...view } = settingsView(stored, toolOf);
  return view;
}

/** A tool as answers show it: header names, values masked (nothing is opened). */
function maskedTool(stored: StoredAgentTool): AgentTool {
  const { parameters_json, headers_json: _sealed, ...rest } = stored;
  return { ...rest, parameters: JSON.parse(parameters_json) as Record<string, unknown>, headers: maskedHeaders(stored) };
}

// Field by field, so that the wire shape never depends on what a stored document carries.
// `transcriber.model` follows the provider from the catalog: an agent saved before the catalog
// named Deepgram's real models (0180) stored a placeholder that no provider knows.
function settingsView(s: StoredAgentSettings, toolFrom: (stored: StoredAgentTool) => AgentTool): AgentSettings & { variables: string[] } {
  const { llm, voice, transcriber: t, call: c, analytics } = s;
  return {
    name: s.name,
    welcome_message: s.welcome_message,
    system_prompt: s.system_prompt,
    llm: { provider: llm.provider, model: llm.model, temperature: llm.temperature, max_tokens: llm.max_tokens },
    voice: {
      provider: voice.provider,
      model: voice.model,
      voice_id: voice.voice_id ?? null,
      voice_name: voice.voice_name ?? null,
      language: voice.language,
      speed: voice.speed,
    },
    transcriber: {
      provider: t.provider,
      model: transcriberModelFor(t.provider),
      turn_detection: t.turn_detection,
      language: t.language,
      endpointing_ms: t.endpointing_ms,
      keyterms: [...t.keyterms],
      speculative_replies: t.speculative_replies === true,
    },
    call: {
      max_duration_seconds: c.max_duration_seconds,
      hangup_after_silence_seconds: c.hangup_after_silence_seconds,
      allow_interruptions: c.allow_interruptions,
      interruption_min_words: c.interruption_min_words,
      call_start_hour: c.call_start_hour,
      call_end_hour: c.call_end_hour,
      timezone: c.timezone,
      record: c.record,
      hangup_message: c.hangup_message,
      hangup_on_prompt: c.hangup_on_prompt,
      hangup_prompt: c.hangup_prompt,
      hangup_interruptible: c.hangup_interruptible,
      check_user_online: c.check_user_online,
      user_online_message: c.user_online_message,
      user_online_after_seconds: c.user_online_after_seconds,
      // Stored before keypad digits existed: both off.
      keypad: { press_digits: c.keypad?.press_digits ?? false, caller_digits: c.keypad?.caller_digits ?? false },
      // Stored before voicemail detection existed: not detecting.
      voicemail: { detect: c.voicemail?.detect ?? false, action: c.voicemail?.action ?? 'hang_up', message: c.voicemail?.message ?? '' },
      // Stored before transfers existed: no destinations.
      transfer: transferView(c.transfer),
      // Stored before opt-outs existed: off (0206).
      opt_out: c.opt_out ?? false,
      opt_out_message: c.opt_out_message ?? '',
      // Stored before storage modes existed: everything (0213).
      data_storage: c.data_storage ?? 'everything',
    },
    analytics: {
      summarize: analytics.summarize,
      extractions: analytics.extractions.map((e) => ({
        key: e.key,
        label: e.label,
        type: e.type,
        description: e.description,
        choices: e.choices.map((ch) => ({ value: ch.value, when: ch.when })),
      })),
      extraction_prompt: analytics.extraction_prompt,
    },
    tools: s.tools.map((stored) => {
      const tool = toolFrom(stored);
      return {
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        method: tool.method,
        url: tool.url,
        headers: tool.headers,
        pre_call_message: tool.pre_call_message,
        timeout_seconds: tool.timeout_seconds,
      };
    }),
    knowledge_base_ids: [...s.knowledge_base_ids],
    webhook_url: s.webhook_url ?? null,
    phone_number: s.phone_number ?? null,
    status: s.status,
    variables: [...s.variables],
  };
}

/** `call.transfer` as shown (docs/decisions/0160); absent on agents saved before transfers existed. */
function transferView(t: Partial<AgentTransfer> | undefined): AgentTransfer {
  return {
    destinations: (t?.destinations ?? []).map((d) => ({ number: d.number, description: d.description, mode: d.mode })),
    handover_message: t?.handover_message ?? '',
    ring_timeout_seconds: t?.ring_timeout_seconds ?? 30,
  };
}
