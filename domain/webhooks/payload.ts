import { formatInZone, renderDates } from '../shared/time';
import type { EventLevel } from './event-types';

/** An event as webhooks carry it (contract, "Request format"). */
export interface WebhookEvent {
  id: string;
  type: string;
  created_at: Date;
  workspace_id: string;
  call_id: string;
  agent_id: string;
  message: string;
  level: EventLevel;
  latency_ms: number | null;
  /** The type's extra `data` fields. */
  data: Record<string, unknown>;
}

/**
 * The JSON text of a delivery: `{id, type, created_at, workspace_id, call_id, agent_id, data:
 * {message, level, latency_ms, ...}}` with every time in UTC as `+00:00`. Built once per event,
 * so every target and every retry sends the same bytes.
 */
export function webhookBody(event: WebhookEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: formatInZone(event.created_at, 'UTC'),
    workspace_id: event.workspace_id,
    call_id: event.call_id,
    agent_id: event.agent_id,
    data: {
      message: event.message,
      level: event.level,
      latency_ms: event.latency_ms,
      ...withoutCommonFields(renderDates(event.data, 'UTC') as Record<string, unknown>),
    },
  });
}

/** The extra fields never replace the three every event has. */
function withoutCommonFields(data: Record<string, unknown>): Record<string, unknown> {
  const { message: _message, level: _level, latency_ms: _latency, ...extra } = data;
  return extra;
}
