import { createHash } from 'node:crypto';
import { newId } from '../../db/ids';

/**
 * Webhook ids carry the contract's prefixes (`we_`, `whd_`, `evt_`) before 32 hex characters.
 * Event and delivery ids of call events are derived from what identifies them, so that a
 * retried fan-out builds the same ids and creates nothing twice.
 */
export const PING_EVENT_ID = 'evt_ping';

export function newEndpointId(): string {
  return `we_${newId()}`;
}

/** A delivery that no event identifies (a ping from `POST /webhooks/{id}/test`). */
export function newDeliveryId(): string {
  return `whd_${newId()}`;
}

/** The event of a call's `sequence`-th timeline entry. */
export function eventIdFor(callId: string, sequence: number): string {
  return `evt_${digest(`${callId}:${sequence}`)}`;
}

/** One event sent to one target (`endpoint:<we_id>` or `agent:<agent_id>`). */
export function deliveryIdFor(eventId: string, targetKey: string): string {
  return `whd_${digest(`${eventId}>${targetKey}`)}`;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
