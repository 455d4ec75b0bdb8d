import { STREAM_CONTENT_TYPE, STREAM_SAMPLE_RATE } from './stream-protocol';

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

/** What an answer document asks of the call, as the simulated provider reads it. */
export type AnswerInstruction =
  | { kind: 'stream'; url: string; bidirectional: boolean }
  | { kind: 'hangup'; reason?: string }
  | { kind: 'dial'; number: string; actionUrl: string | null; callbackUrl: string | null; timeoutSeconds: number | null; timeLimitSeconds: number | null; callerId: string | null }
  | { kind: 'conference'; room: string; callbackUrl: string | null }
  | { kind: 'nothing' };

/**
 * The first `<Stream>` or `<Hangup>` (with its `reason`, if any) of a `<Response>`, whichever
 * comes first; `nothing` for a response without either (Plivo then ends the call, having
 * nothing left to do), and null for text that is not a `<Response>` document. A reader of the
 * two elements the service uses, not a general XML parser.
 */
export function parseAnswerXml(xml: string): AnswerInstruction | null {
  const body = /<Response\s*>([\s\S]*)<\/Response\s*>|<Response\s*\/>/.exec(xml);
  if (!body) return null;
  const element = /<(Stream|Hangup|Dial|Conference)\b([^>]*?)(\/>|>([\s\S]*?)<\/\1\s*>)/.exec(body[1] ?? '');
  if (!element) return { kind: 'nothing' };
  const attribute = (name: string): string | null => {
    const found = new RegExp(`\\b${name}\\s*=\\s*"([^"]*)"`).exec(element[2] ?? '');
    return found ? unescapeXml(found[1]!) : null;
  };
  const seconds = (name: string): number | null => {
    const value = attribute(name);
    return value !== null && /^\d+$/.test(value) ? Number(value) : null;
  };
  if (element[1] === 'Dial') {
    const number = /<Number\b[^>]*>([\s\S]*?)<\/Number\s*>/.exec(element[4] ?? '');
    if (!number) return { kind: 'nothing' };
    const dialled = unescapeXml(number[1]!.trim());
    return {
      kind: 'dial',
      number: /^\d+$/.test(dialled) ? `+${dialled}` : dialled,
      actionUrl: attribute('action'),
      callbackUrl: attribute('callbackUrl'),
      timeoutSeconds: seconds('timeout'),
      timeLimitSeconds: seconds('timeLimit'),
      callerId: attribute('callerId'),
    };
  }
  if (element[1] === 'Conference') return { kind: 'conference', room: unescapeXml((element[4] ?? '').trim()), callbackUrl: attribute('callbackUrl') };
  if (element[1] === 'Hangup') {
    const reason = /\breason\s*=\s*"([^"]*)"/.exec(element[2] ?? '');
    return reason ? { kind: 'hangup', reason: unescapeXml(reason[1]!) } : { kind: 'hangup' };
  }
  const bidirectional = /\bbidirectional\s*=\s*"true"/.test(element[2] ?? '');
  return { kind: 'stream', url: unescapeXml((element[4] ?? '').trim()), bidirectional };
}

function unescapeXml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[name]!);
}
