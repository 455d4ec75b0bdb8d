import { Call, FINAL_CALL_STATUSES, type CallDocument, type CallStatus } from '../../db/models/call';
import { CallEvent } from '../../db/models/call-event';
import { WebhookAttempt } from '../../db/models/webhook-attempt';
import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { deleteRecording } from '../calls/recording-store';
import { discardPreparedWelcome } from '../calls/prepared-welcome';

/**
 * The parts of one call's personal data, and how each is erased (docs/decisions/0208). Each
 * function erases one part, is safe to run again, and leaves what billing and audit need: ids,
 * times, duration, cost, status, usage. `eraseCall` runs them in an order that makes a crash
 * half-way harmless: the call record last, since its caller's number is how an erasure by
 * person finds the call again.
 *
 * Shared by `DELETE /calls/{id}`, erasure by person, the closing of a workspace and the
 * retention sweep (which erases only some parts of older calls).
 */

/** The text that replaces an erased free-text value where the field must stay a string. */
export const ERASED_TEXT = '';

/**
 * Event `data` keys that carry no personal data (numbers, model names, enums), kept on an
 * erased event: the timeline still shows what happened and how long it took, not what was said.
 */
export const KEPT_EVENT_DATA_KEYS: ReadonlySet<string> = new Set([
  'duration_seconds',
  'avg_first_audio_ms',
  'agent_spoke',
  'usage',
  'model_ms',
  'welcome',
  'channel',
  'stt',
  'llm',
  'tts',
  'position',
  'detected_by',
  'action',
  'mode',
  'status',
  'after_goodbye',
]);

/** Statuses in which a call may be erased: final ones (a queued or live call is still being written). */
export function isErasable(status: CallStatus): boolean {
  return FINAL_CALL_STATUSES.includes(status);
}

/** Erases the call's recording bytes; true when it had one. */
export async function eraseCallRecording(callId: string): Promise<boolean> {
  return deleteRecording(callId);
}

/** An event's data with only the kept keys (see KEPT_EVENT_DATA_KEYS). */
export function erasedEventData(dataJson: string): Record<string, unknown> {
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(dataJson || '{}') as Record<string, unknown>;
  } catch {
    return {};
  }
  return Object.fromEntries(Object.entries(data).filter(([key]) => KEPT_EVENT_DATA_KEYS.has(key)));
}

/** Erases the text of every event of the call (message and personal data fields); answers how many events it changed. */
export async function eraseCallEventTexts(callId: string): Promise<number> {
  const events = await CallEvent.find({ call_id: callId }, { message: 1, data_json: 1 }).lean();
  let changed = 0;
  for (const event of events) {
    const dataJson = JSON.stringify(erasedEventData(event.data_json ?? '{}'));
    if (event.message === ERASED_TEXT && event.data_json === dataJson) continue;
    await CallEvent.updateOne({ _id: event._id }, { $set: { message: ERASED_TEXT, data_json: dataJson } });
    changed++;
  }
  return changed;
}

/**
 * A delivery's body after erasure: the envelope (ids, type, times, level, latency) with the
 * event's data cut to the kept keys, and `erased: true` so a reader of the stored body knows.
 */
export function erasedDeliveryBody(requestBody: string): string {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(requestBody) as Record<string, unknown>;
  } catch {
    body = {};
  }
  const data = (body.data && typeof body.data === 'object' ? body.data : {}) as Record<string, unknown>;
  const kept = Object.fromEntries(Object.entries(data).filter(([key]) => KEPT_EVENT_DATA_KEYS.has(key) || key === 'level' || key === 'latency_ms'));
  const envelope = Object.fromEntries(['id', 'type', 'created_at', 'workspace_id', 'call_id', 'agent_id'].filter((k) => k in body).map((k) => [k, body[k]]));
  return JSON.stringify({ ...envelope, data: { ...kept, message: ERASED_TEXT, erased: true } });
}

/**
 * Erases the stored bodies of the call's webhook deliveries, and what targets answered (an
 * answer may echo the body): the delivery's last response excerpt and every attempt's.
 * Answers how many deliveries it changed. A retry still waiting sends the erased body.
 */
export async function eraseCallDeliveryBodies(workspaceId: string, callId: string): Promise<number> {
  const deliveries = await WebhookDelivery.find({ workspace_id: workspaceId, call_id: callId }, { request_body: 1, last_response: 1 }).lean();
  let changed = 0;
  for (const delivery of deliveries) if (await eraseDeliveryBody(delivery)) changed++;
  return changed;
}

/** One delivery's stored body and what its target answered, erased; true when it changed. Safe to run again. */
export async function eraseDeliveryBody(delivery: {
  _id: string;
  request_body: string;
  last_response?: { body_excerpt?: string | null } | null;
}): Promise<boolean> {
  const body = erasedDeliveryBody(delivery.request_body);
  await WebhookAttempt.updateMany({ delivery_id: delivery._id }, { $set: { response_excerpt: ERASED_TEXT } });
  if (delivery.request_body === body && !delivery.last_response?.body_excerpt) return false;
  await WebhookDelivery.updateOne(
    { _id: delivery._id },
    { $set: { request_body: body, ...(delivery.last_response ? { 'last_response.body_excerpt': ERASED_TEXT } : {}) } },
  );
  return true;
}

/**
 * What of the call record itself is erased: transcript, user_data, summary, extracted values,
 * the analytics error (it may quote the model's answer) and the other party's number (the
 * caller of an inbound call also in `placed_by`). The workspace's own number stays.
 */
export function erasedCallFields(call: Pick<CallDocument, 'direction' | 'placed_by' | 'from_number'>, at: Date): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    transcript: [],
    user_data: {},
    summary: null,
    extracted: null,
    analytics_error: null,
    erased_at: at,
  };
  if (call.direction === 'inbound') {
    fields.from_number = ERASED_TEXT;
    if (call.placed_by && call.placed_by === call.from_number) fields.placed_by = ERASED_TEXT;
  } else {
    fields.to_number = ERASED_TEXT;
  }
  return fields;
}

/** Erases the call record's personal fields and marks it `erased_at` (kept from a first erasure). */
export async function eraseCallRecordFields(
  call: Pick<CallDocument, '_id' | 'direction' | 'placed_by' | 'from_number' | 'erased_at'>,
  at: Date,
): Promise<void> {
  const fields = erasedCallFields(call, call.erased_at ?? at);
  await Call.updateOne({ _id: call._id }, { $set: { ...fields, updated_at: at } });
}

export interface CallErasureResult {
  callId: string;
  recording: boolean;
  events: number;
  deliveries: number;
}

/**
 * Erases every part of one final call, the record last. The caller checks the status (a live
 * call is refused: its workflow would write the transcript back). Safe to run again.
 */
export async function eraseCall(call: CallDocument, at: Date): Promise<CallErasureResult> {
  const events = await eraseCallEventTexts(call._id);
  const deliveries = await eraseCallDeliveryBodies(call.workspace_id, call._id);
  const recording = await eraseCallRecording(call._id);
  await discardPreparedWelcome(call._id);
  await eraseCallRecordFields(call, at);
  return { callId: call._id, recording, events, deliveries };
}
