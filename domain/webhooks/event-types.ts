/**
 * The contract's event types ("Events" in service-api.md): what `GET /webhooks/events` lists,
 * what an endpoint may subscribe to, and what the call workflow may emit. `ping` is not
 * subscribable: `POST /webhooks/{id}/test` sends it to that one endpoint whatever it
 * subscribes to.
 */
export const EVENT_TYPES = [
  { type: 'call.queued', description: 'an outbound call joined the queue', data_fields: ['position', 'by'] },
  { type: 'call.dequeued', description: 'a slot is free and the call is about to be dialled; latency_ms is the wait', data_fields: [] },
  { type: 'call.placed', description: 'the telephony provider accepted the dial request', data_fields: [] },
  {
    type: 'call.started',
    description: 'the call connected and the agent is live',
    data_fields: ['channel', 'from', 'to', 'stt', 'llm', 'tts', 'started_by', 'values'],
  },
  {
    type: 'call.voicemail',
    description: 'an answering machine answered an outbound call; the agent hangs up or leaves its message (detected_by: provider or transcript)',
    data_fields: ['detected_by', 'action'],
  },
  { type: 'welcome', description: 'the agent starts its welcome message (text in message)', data_fields: [] },
  {
    type: 'tts.first_audio',
    description:
      "first audio of a reply played; latency_ms from the caller finishing; a spoken turn's reply has its voice-to-voice time on the media node and its parts (end of turn, recogniser, model first token and first sentence, speech first byte, ours)",
    data_fields: [
      'welcome',
      'voice_to_voice_ms',
      'end_of_turn_ms',
      'recogniser_ms',
      'model_first_token_ms',
      'model_first_sentence_ms',
      'speech_first_byte_ms',
      'ours_ms',
    ],
  },
  {
    type: 'user.turn',
    description: "the caller finished a turn (message is what they said); a spoken turn has the recogniser's end-of-turn wait and its own time",
    data_fields: ['after_goodbye', 'digits', 'end_of_turn_ms', 'recogniser_ms'],
  },
  { type: 'llm.first_token', description: 'the language model started answering; latency_ms from the caller finishing', data_fields: ['model_ms'] },
  { type: 'agent.reply', description: 'the agent finished a reply (message is the full text)', data_fields: [] },
  { type: 'interrupted', description: 'the caller talked over the agent (message is what the caller heard)', data_fields: [] },
  { type: 'tool.call', description: 'the agent called a tool', data_fields: ['name', 'args', 'url'] },
  { type: 'tool.result', description: 'the tool answered or failed; latency_ms is the request time', data_fields: ['name', 'status', 'result'] },
  { type: 'call.transfer_started', description: 'the agent is handing the caller to a person (transfer_call)', data_fields: ['destination', 'mode', 'reason'] },
  { type: 'call.transferred', description: 'the destination answered: a person took the call', data_fields: ['destination', 'mode'] },
  {
    type: 'call.transfer_failed',
    description: 'the transfer did not reach a person (reason: no-answer, busy, failed, machine, canceled, error)',
    data_fields: ['destination', 'mode', 'reason'],
  },
  { type: 'user.online_check', description: 'the agent asked if the caller is still there', data_fields: [] },
  {
    type: 'call.opted_out',
    description: 'the caller asked not to be called again: their number is on the do-not-call list (source opt_out) and the call ends',
    data_fields: ['number', 'source'],
  },
  { type: 'hangup.prompt', description: 'the hang-up prompt decided the conversation is over', data_fields: [] },
  { type: 'error', description: 'something went wrong; level warning or error', data_fields: ['provider'] },
  { type: 'call.ended', description: 'the call ended for any reason', data_fields: ['duration_seconds', 'avg_first_audio_ms', 'agent_spoke', 'usage'] },
  { type: 'call.completed', description: 'the final call record is saved, after post-call analytics', data_fields: ['call'] },
  {
    type: 'privacy.erasure.completed',
    description: 'an erasure by person (POST /privacy/erasures) has finished; call_id is the erasure id; the data names the person only masked',
    data_fields: ['erasure_id', 'phone', 'erased', 'waiting'],
  },
] as const;

export type CallEventType = (typeof EVENT_TYPES)[number]['type'];
export type EventType = CallEventType | 'ping';

export const SUBSCRIBABLE_EVENT_TYPES: readonly string[] = EVENT_TYPES.map((e) => e.type);

/** An endpoint subscribed to every event. */
export const ALL_EVENTS = '*';

export type { EventLevel } from '../../contracts/webhooks';
