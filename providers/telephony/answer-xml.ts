import { STREAM_CONTENT_TYPE, STREAM_SAMPLE_RATE } from './stream-protocol';

/**
 * Plivo XML, the answer to the provider's answer request: what the answered call does. The
 * service only ever answers one of two documents: connect the call's audio to a media node
 * over a bidirectional stream, or hang up (for an inbound call not taken, with reason `rejected`).
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

/** What an answer document asks of the call, as the simulated provider reads it. */
export type AnswerInstruction = { kind: 'stream'; url: string; bidirectional: boolean } | { kind: 'hangup'; reason?: string } | { kind: 'nothing' };

/**
 * The first `<Stream>` or `<Hangup>` (with its `reason`, if any) of a `<Response>`, whichever
 * comes first; `nothing` for a response without either (Plivo then ends the call, having
 * nothing left to do), and null for text that is not a `<Response>` document. A reader of the
 * two elements the service uses, not a general XML parser.
 */
export function parseAnswerXml(xml: string): AnswerInstruction | null {
  const body = /<Response\s*>([\s\S]*)<\/Response\s*>|<Response\s*\/>/.exec(xml);
  if (!body) return null;
  const element = /<(Stream|Hangup)\b([^>]*?)(\/>|>([\s\S]*?)<\/\1\s*>)/.exec(body[1] ?? '');
  if (!element) return { kind: 'nothing' };
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
