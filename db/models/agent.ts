import { Schema, model } from 'mongoose';
import { openSecret, sealSecret } from '../../contracts/secret-box';
import type { DataStorage } from '../../contracts/data-storage';

/**
 * A voice agent: the fields of the contract's Agent table in its nested shape, plus the
 * workspace, the current version and who saved it. Every write stores the complete settings
 * (defaults filled in by the API from `domain/agents/catalog.ts`), so readers never apply
 * defaults themselves.
 *
 * One departure from the contract's shape: a tool's `parameters` (a JSON Schema) and
 * `headers` are stored as JSON text (`parameters_json`, `headers_json`), because MongoDB-
 * compatible stores refuse keys such as `$ref`, `$schema` or `X-Api.Key`. `toolOf` and
 * `storedTool` convert; use them rather than reading the text. Header values (a customer's CRM
 * token, typically) are stored sealed, each on its own (`contracts/secret-box.ts`,
 * docs/decisions/0196); their names stay readable, which is all an answer shows (0195).
 */

export interface AgentTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  pre_call_message: string;
  timeout_seconds: number;
}

export interface StoredAgentTool extends Omit<AgentTool, 'parameters' | 'headers'> {
  parameters_json: string;
  headers_json: string;
}

export interface AgentExtraction {
  key: string;
  label: string;
  type: 'text' | 'number' | 'boolean' | 'choice' | 'date' | 'list';
  description: string;
  choices: { value: string; when: string }[];
}

/** One number the agent may hand a caller to: `description` says when the model should use it. */
export interface TransferDestination {
  number: string;
  description: string;
  mode: 'cold' | 'warm';
}

export interface AgentTransfer {
  destinations: TransferDestination[];
  /** Said to the caller before the transfer (warm uses a built-in line when empty). */
  handover_message: string;
  ring_timeout_seconds: number;
}

/** The settings of an agent as the API shows them (the contract's Agent table). */
export interface AgentSettings {
  name: string;
  welcome_message: string;
  system_prompt: string;
  llm: { provider: string; model: string; temperature: number; max_tokens: number };
  voice: { provider: string; model: string; voice_id: string | null; voice_name: string | null; language: string; speed: number };
  transcriber: {
    provider: 'provider_a' | 'provider_b';
    model: string;
    turn_detection: 'responsive' | 'balanced' | 'patient';
    language: string;
    endpointing_ms: number;
    keyterms: string[];
    /** Start replies on Flux's early end of turn (docs/decisions/0227); absent on agents saved before it: off. */
    speculative_replies?: boolean;
  };
  call: {
    max_duration_seconds: number;
    hangup_after_silence_seconds: number;
    allow_interruptions: boolean;
    interruption_min_words: number;
    call_start_hour: number;
    call_end_hour: number;
    timezone: string;
    record: boolean;
    hangup_message: string;
    hangup_on_prompt: boolean;
    hangup_prompt: string;
    hangup_interruptible: boolean;
    check_user_online: boolean;
    user_online_message: string;
    user_online_after_seconds: number;
    /** Keypad digits (DTMF): the built-in `press_digits` tool, and the caller's digits reaching the model. */
    keypad: { press_digits: boolean; caller_digits: boolean };
    /** Answering machines on outbound phone calls (docs/decisions/0158): detect, then hang up or leave `message` after the beep. */
    voicemail: { detect: boolean; action: 'hang_up' | 'leave_message'; message: string };
    /** Transfer to a person (docs/decisions/0160): the built-in `transfer_call` tool, offered when `destinations` is not empty. */
    transfer: AgentTransfer;
    /** A caller asking not to be called again (docs/decisions/0206): the built-in `add_to_do_not_call` tool. */
    opt_out: boolean;
    /** Said before the call ends on an opt-out; empty: a default in the agent's language. */
    opt_out_message: string;
    /** What is kept of each call (docs/decisions/0213). */
    data_storage: DataStorage;
  };
  analytics: { summarize: boolean; extractions: AgentExtraction[]; extraction_prompt: string };
  tools: AgentTool[];
  knowledge_base_ids: string[];
  webhook_url: string | null;
  phone_number: string | null;
  status: 'active' | 'paused';
}

/** The settings as stored: tools in their storable form, and the derived `variables`. */
export interface StoredAgentSettings extends Omit<AgentSettings, 'tools'> {
  tools: StoredAgentTool[];
  /** Every `{variable}` of the welcome message, then the prompt (derived when saved). */
  variables: string[];
}

export interface StoredAgent extends StoredAgentSettings {
  _id: string;
  workspace_id: string;
  version: number;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}

/** The tool as stored: its header values sealed, each under a fresh data key. */
export function storedTool(tool: AgentTool): StoredAgentTool {
  const { parameters, headers, ...rest } = tool;
  return { ...rest, parameters_json: JSON.stringify(parameters), headers_json: JSON.stringify(mapValues(headers, sealSecret)) };
}

/** The tool with its header values opened: for running it (a call, a tool test) and saving it again, never for an answer. */
export function toolOf(stored: StoredAgentTool): AgentTool {
  const { parameters_json, headers_json: _sealed, ...rest } = stored;
  return { ...rest, parameters: JSON.parse(parameters_json) as Record<string, unknown>, headers: mapValues(storedHeaders(stored), openSecret) };
}

/** The tool's header names in their stored order, without opening any value. */
export function toolHeaderNames(stored: StoredAgentTool): string[] {
  return Object.keys(storedHeaders(stored));
}

function storedHeaders(stored: StoredAgentTool): Record<string, string> {
  return JSON.parse(stored.headers_json) as Record<string, string>;
}

function mapValues(record: Record<string, string>, f: (value: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([name, value]) => [name, f(value)]));
}

const required = (type: unknown) => ({ type, required: true });
const nullableString = { type: String, default: null };

const toolSchema = new Schema(
  {
    name: required(String),
    description: required(String),
    parameters_json: required(String),
    method: { type: String, enum: ['GET', 'POST'], required: true },
    url: required(String),
    headers_json: required(String),
    pre_call_message: { type: String, default: '' },
    timeout_seconds: required(Number),
  },
  { _id: false },
);

const extractionSchema = new Schema(
  {
    key: required(String),
    label: { type: String, default: '' },
    type: required(String),
    description: { type: String, default: '' },
    choices: [new Schema({ value: required(String), when: { type: String, default: '' } }, { _id: false })],
  },
  { _id: false },
);

/** The settings' fields, shared by agents and their versions. */
export const agentSettingsFields = {
  name: required(String),
  welcome_message: { type: String, default: '' },
  system_prompt: { type: String, default: '' },
  llm: { provider: required(String), model: required(String), temperature: required(Number), max_tokens: required(Number) },
  voice: {
    provider: required(String),
    model: required(String),
    voice_id: nullableString,
    voice_name: nullableString,
    language: required(String),
    speed: required(Number),
  },
  transcriber: {
    provider: required(String),
    model: required(String),
    turn_detection: required(String),
    language: required(String),
    endpointing_ms: required(Number),
    keyterms: { type: [String], default: [] },
    speculative_replies: { type: Boolean, default: false },
  },
  call: {
    max_duration_seconds: required(Number),
    hangup_after_silence_seconds: required(Number),
    allow_interruptions: required(Boolean),
    interruption_min_words: required(Number),
    call_start_hour: required(Number),
    call_end_hour: required(Number),
    timezone: required(String),
    record: required(Boolean),
    hangup_message: { type: String, default: '' },
    hangup_on_prompt: required(Boolean),
    hangup_prompt: { type: String, default: '' },
    hangup_interruptible: required(Boolean),
    check_user_online: required(Boolean),
    user_online_message: { type: String, default: '' },
    user_online_after_seconds: required(Number),
    // Agents saved before keypad digits existed read as both off.
    keypad: { press_digits: { type: Boolean, default: false }, caller_digits: { type: Boolean, default: false } },
    // Agents saved before voicemail detection existed read as not detecting.
    voicemail: { detect: { type: Boolean, default: false }, action: { type: String, default: 'hang_up' }, message: { type: String, default: '' } },
    // Agents saved before transfers existed read as transferring nowhere.
    transfer: {
      destinations: {
        type: [new Schema({ number: required(String), description: { type: String, default: '' }, mode: { type: String, default: 'cold' } }, { _id: false })],
        default: [],
      },
      handover_message: { type: String, default: '' },
      ring_timeout_seconds: { type: Number, default: 30 },
    },
    // Agents saved before opt-outs existed read as off: they keep behaving as they did (0206).
    opt_out: { type: Boolean, default: false },
    opt_out_message: { type: String, default: '' },
    // Agents saved before storage modes existed keep everything, as they did.
    data_storage: { type: String, default: 'everything' },
  },
  analytics: { summarize: required(Boolean), extractions: { type: [extractionSchema], default: [] }, extraction_prompt: { type: String, default: '' } },
  tools: { type: [toolSchema], default: [] },
  knowledge_base_ids: { type: [String], default: [] },
  webhook_url: nullableString,
  phone_number: nullableString,
  status: { type: String, enum: ['active', 'paused'], required: true },
  variables: { type: [String], default: [] },
};

const agentSchema = new Schema(
  {
    _id: required(String),
    workspace_id: required(String),
    ...agentSettingsFields,
    version: required(Number),
    updated_by: required(String),
    created_at: required(Date),
    updated_at: required(Date),
  },
  { collection: 'agents', versionKey: false, minimize: false },
);
agentSchema.index({ workspace_id: 1, created_at: -1 });

export const Agent = model('Agent', agentSchema);
