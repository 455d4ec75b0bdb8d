import { STREAM_CONTENT_TYPE, STREAM_SAMPLE_RATE } from '../../contracts/telephony-stream';

/**
 * Plivo XML, the answer to the provider's answer request: what the answered call does. The
 * service answers: connect the call's audio to a media node over a bidirectional stream, or
 * hang up (for an inbound call not taken, with reason `rejected`); and, for a transfer to a
 * person (docs/decisions/0160), dial the destination (`<Dial><Number>`) or join a conference room.
 */

/**
 * Streams the call's audio both ways to `url` (a `ws:`/`wss:` URL). `keepCallAlive` holds the
 * call for as long as the stream is open; when it closes, nothing follows and the call ends.
 */
export function streamAnswerXml(url: string): string {
  const attributes = `bidirectional="true" keepCallAlive="true" contentType="${STREAM_CONTENT_TYPE};rate=${STREAM_SAMPLE_RATE}"`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Stream ${attributes}>${escapeXml(url)}</Stream></Response>`;
}

export const HANGUP_ANSWER_XML = '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Hangup/></Response>';

/** Refuses an inbound call before answering it: the caller hears it rejected, and nothing is charged by the provider. */
export const REJECT_ANSWER_XML = '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Hangup reason="rejected"/></Response>';

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** Cold transfer: what the transferred call does (Plivo's `<Dial>` of one `<Number>`; see docs/decisions/0160). */
export interface DialXmlOptions {
  /** E.164; Plivo writes it as digits. */
  number: string;
  /** The caller ID the destination sees (E.164). */
  callerId: string;
  /** Seconds the destination may ring (`ring_timeout_seconds`). */
  timeoutSeconds: number;
  /** Told (POST) when the dial ends, with `DialStatus`; its XML is what the call does next. */
  actionUrl: string;
  /** Told (POST) of the B leg's answer and hang-up (`DialAction`, `DialBLegStatus`, `DialBLegDuration`). */
  callbackUrl: string;
  /** The most the bridged call may last (seconds). */
  timeLimitSeconds: number;
}

export function dialXml(options: DialXmlOptions): string {
  const attributes = [
    `action="${escapeXml(options.actionUrl)}"`,
    'method="POST"',
    `callbackUrl="${escapeXml(options.callbackUrl)}"`,
    'callbackMethod="POST"',
    `timeout="${Math.round(options.timeoutSeconds)}"`,
    `timeLimit="${Math.round(options.timeLimitSeconds)}"`,
    `callerId="${escapeXml(digits(options.callerId))}"`,
    'redirect="true"',
  ].join(' ');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Dial ${attributes}><Number>${escapeXml(digits(options.number))}</Number></Dial></Response>`;
}

/** Warm transfer: the leg joins the named conference room (it starts when the first enters, ends when the last leaves). */
export function conferenceXml(room: string, options: { callbackUrl?: string } = {}): string {
  const callback = options.callbackUrl ? ` callbackUrl="${escapeXml(options.callbackUrl)}" callbackMethod="POST"` : '';
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Conference startConferenceOnEnter="true" endConferenceOnExit="true" waitSound="" beep="false"${callback}>${escapeXml(room)}</Conference></Response>`;
}

function digits(number: string): string {
  return number.replace(/^\+/, '');
}
