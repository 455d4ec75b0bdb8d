import { Schema, model } from 'mongoose';
import { agentSettingsFields, type StoredAgentSettings } from './agent';

/**
 * One saved version of an agent: its settings as they were saved, by whom and when. The id
 * is `<agent_id>:<version>`, so a version is read and dropped by its `_id` (the one filter
 * FerretDB hands down to SQLite), and inserting it claims the number: two saves can never
 * both write version N. Only the newest 10 of an agent are kept (`domain/agents/store.ts`).
 */
export interface StoredAgentVersion {
  _id: string;
  agent_id: string;
  workspace_id: string;
  version: number;
  settings: StoredAgentSettings;
  updated_by: string;
  updated_at: Date;
}

export function agentVersionId(agentId: string, version: number): string {
  return `${agentId}:${version}`;
}

const agentVersionSchema = new Schema(
  {
    _id: { type: String, required: true },
    agent_id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    version: { type: Number, required: true },
    settings: { type: new Schema(agentSettingsFields, { _id: false, minimize: false }), required: true },
    updated_by: { type: String, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'agent_versions', versionKey: false, minimize: false },
);
agentVersionSchema.index({ agent_id: 1, version: -1 });

export const AgentVersion = model('AgentVersion', agentVersionSchema);
