import type { CallDocument } from '../../db/models/call';
import type { components } from '../../schemas/api-types';
import { voiceToVoiceFigures } from './voice-to-voice';

type CallView = components['schemas']['Call'];

/** A call as the API shows it (dates stay Date; the API renders them in the caller's zone). */
export function callView(c: CallDocument) {
  return {
    id: c._id,
    agent_id: c.agent_id,
    agent_name: c.agent_name,
    direction: c.direction,
    to_number: c.to_number,
    from_number: c.from_number,
    status: c.status,
    user_data: (c.user_data ?? {}) as Record<string, unknown>,
    transcript: (c.transcript ?? []).map((t) => ({ role: t.role, text: t.text, at: t.at, interrupted: t.interrupted ?? false })),
    duration_seconds: c.duration_seconds ?? null,
    cost_paise: c.cost_paise ?? null,
    hangup_by: c.hangup_by ?? null,
    hangup_reason: c.hangup_reason ?? null,
    summary: c.summary ?? null,
    extracted: (c.extracted ?? null) as Record<string, unknown> | null,
    placed_by: c.placed_by ?? '',
    queued_at: c.queued_at ?? null,
    dequeued_at: c.dequeued_at ?? null,
    started_at: c.started_at ?? null,
    ended_at: c.ended_at ?? null,
    avg_first_audio_ms: c.avg_first_audio_ms ?? null,
    ...voiceToVoiceFigures(c.voice_to_voice_ms ?? []),
    answered_by: (c.answered_by ?? null) as 'human' | 'machine' | null,
    transfer: c.transfer
      ? {
          destination: c.transfer.destination,
          description: c.transfer.description,
          mode: c.transfer.mode as 'cold' | 'warm',
          status: c.transfer.status as 'started' | 'transferred' | 'failed',
          reason: c.transfer.reason ?? null,
          transferred_at: c.transfer.transferred_at ?? null,
          bridged_seconds: c.transfer.bridged_seconds,
        }
      : null,
    erased_at: c.erased_at ?? null,
    created_at: c.created_at,
  } satisfies Record<keyof CallView, unknown>;
}

export interface StoredCallEvent {
  _id: string;
  type: string;
  message: string;
  level: string;
  latency_ms: number | null;
  data_json: string;
  created_at: Date;
}

export function callEventView(e: StoredCallEvent) {
  return {
    id: e._id,
    type: e.type,
    message: e.message,
    level: e.level,
    latency_ms: e.latency_ms ?? null,
    data: JSON.parse(e.data_json || '{}') as Record<string, unknown>,
    at: e.created_at,
  };
}
