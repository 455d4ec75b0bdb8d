import { Agent } from '../../db/models/agent';
import { Call } from '../../db/models/call';
import { CallEvent } from '../../db/models/call-event';
import { dataStorageOf, type DataStorage } from '../../contracts/data-storage';
import { maskPii, maskPiiDeep } from './pii-mask';

/**
 * What each `call.data_storage` mode keeps (docs/decisions/0213). The webhooks of a call carry
 * what they always carried; what is stored is reduced:
 * - `everything_except_pii`: the timeline entries are stored masked as they are written; the
 *   transcript, summary and extracted values are masked once `call.completed` has been built
 *   from them; a delivery's body is masked once its delivery is over (delivered or failed).
 * - `basic_attributes_only`: once `call.completed` has been built, the transcript, summary and
 *   extracted values are erased and the timeline keeps no text; a delivery's body is reduced
 *   to the basic attributes once its delivery is over.
 * Neither keeps a recording.
 */

/** The mode of a call's agent, as a new call record keeps it (unknown agent: everything). */
export async function agentDataStorage(agentId: string): Promise<DataStorage> {
  if (!agentId) return 'everything';
  const agent = await Agent.findById(agentId, { 'call.data_storage': 1 }).lean<{ call?: { data_storage?: string } }>();
  return dataStorageOf(agent?.call?.data_storage);
}

// A call's mode never changes: remembered per process, so that the fan-out reads it once per call.
const remembered = new Map<string, DataStorage>();
const REMEMBERED_CALLS = 10_000;

/** The mode a call was created with (older records: everything). */
export async function callDataStorage(callId: string): Promise<DataStorage> {
  if (!callId) return 'everything';
  const known = remembered.get(callId);
  if (known) return known;
  const call = await Call.findById(callId, { data_storage: 1 }).lean<{ data_storage?: string }>();
  const mode = dataStorageOf(call?.data_storage);
  if (remembered.size >= REMEMBERED_CALLS) remembered.delete(remembered.keys().next().value!);
  remembered.set(callId, mode);
  return mode;
}

/** Event types whose message is words of the conversation (what was said, heard or sent to a tool). */
const CONVERSATION_TEXT_TYPES = new Set(['welcome', 'user.turn', 'agent.reply', 'interrupted', 'tool.call', 'tool.result', 'call.transfer_started']);
/** The data fields of an event that are basic attributes (no words, numbers or values of the caller). */
const BASIC_DATA_FIELDS = new Set([
  'position',
  'by',
  'channel',
  'stt',
  'llm',
  'tts',
  'started_by',
  'detected_by',
  'action',
  'welcome',
  'after_goodbye',
  'model_ms',
  'name',
  'status',
  'mode',
  'source',
  'provider',
  'duration_seconds',
  'avg_first_audio_ms',
  'agent_spoke',
  'usage',
]);
/** The call record's fields that hold words of the call: dropped from `call.completed`'s `data.call` in basic mode. */
const CALL_TEXT_FIELDS = ['transcript', 'transcript_text', 'summary', 'extracted'];

/** An event's message and data reduced to basic attributes. */
export function basicEvent(type: string, message: string, data: Record<string, unknown>): { message: string; data: Record<string, unknown> } {
  const kept = Object.fromEntries(Object.entries(data).filter(([key]) => BASIC_DATA_FIELDS.has(key)));
  if (type === 'call.completed' && typeof data.call === 'object' && data.call !== null) {
    kept.call = Object.fromEntries(Object.entries(data.call).filter(([key]) => !CALL_TEXT_FIELDS.includes(key)));
  }
  return { message: CONVERSATION_TEXT_TYPES.has(type) ? '' : message, data: kept };
}

/** A timeline entry's message and data as they are written (only `everything_except_pii` changes them here). */
export function storedEventText(mode: DataStorage, message: string, data: Record<string, unknown>): { message: string; data: Record<string, unknown> } {
  return mode === 'everything_except_pii' ? { message: maskPii(message), data: maskPiiDeep(data) } : { message, data };
}

/** The body a delivery keeps once it is over; null: the body as sent. */
export function bodyKeptAfterDelivery(mode: DataStorage, body: string): string | null {
  if (mode === 'everything') return null;
  // The body's shape (domain/webhooks/payload.ts): `data` holds message, level, latency_ms and the type's fields.
  const event = JSON.parse(body) as { type: string; data: { message: string; level: string; latency_ms: number | null } & Record<string, unknown> };
  if (mode === 'everything_except_pii') return JSON.stringify(maskPiiDeep(event));
  const { message, level, latency_ms: latencyMs, ...fields } = event.data;
  const basic = basicEvent(event.type, message, fields);
  return JSON.stringify({ ...event, data: { message: basic.message, level, latency_ms: latencyMs, ...basic.data } });
}

/**
 * After `call.completed` was built from the full record: what the call's mode keeps of its
 * transcript, summary and extracted values, and (basic) of its timeline's text. Safe to repeat.
 */
export async function reduceCallAfterCompletion(callId: string, mode: DataStorage, now: Date): Promise<void> {
  if (mode === 'everything') return;
  if (mode === 'basic_attributes_only') {
    await Call.updateOne({ _id: callId }, { $set: { transcript: [], summary: null, extracted: null, updated_at: now } });
    const events = await CallEvent.find({ call_id: callId }, { type: 1, message: 1, data_json: 1 }).lean();
    for (const event of events) {
      const basic = basicEvent(event.type, event.message ?? '', JSON.parse(event.data_json ?? '{}') as Record<string, unknown>);
      await CallEvent.updateOne({ _id: event._id }, { $set: { message: basic.message, data_json: JSON.stringify(basic.data) } });
    }
    return;
  }
  const call = await Call.findById(callId, { transcript: 1, summary: 1, extracted: 1 }).lean();
  if (!call) return;
  await Call.updateOne(
    { _id: callId },
    {
      $set: {
        transcript: (call.transcript ?? []).map((entry) => ({ ...entry, text: maskPii(entry.text) })),
        summary: call.summary == null ? null : maskPii(call.summary),
        extracted: call.extracted == null ? null : maskPiiDeep(call.extracted),
        updated_at: now,
      },
    },
  );
}
