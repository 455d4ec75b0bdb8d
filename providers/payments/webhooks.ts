import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Razorpay's webhooks (https://razorpay.com/docs/webhooks/): a JSON event POSTed to the URL set
 * in the dashboard, signed in `X-Razorpay-Signature` as hex HMAC-SHA256 of the raw request body
 * under the webhook's own secret (not the key secret), exactly as the `razorpay` SDK's
 * `validateWebhookSignature(body, signature, secret)` checks it. Each event carries its id in
 * `x-razorpay-event-id`; a failed delivery (any non-2xx) is retried for 24 hours.
 */
export const RAZORPAY_SIGNATURE_HEADER = 'x-razorpay-signature';
export const RAZORPAY_EVENT_ID_HEADER = 'x-razorpay-event-id';

/** The events that say an order's payment was captured: either completes the top-up. */
export const PAYMENT_CAPTURED_EVENTS = ['order.paid', 'payment.captured'] as const;

/**
 * Whether `signature` is the webhook secret's hex HMAC-SHA256 of the raw body: the SDK's string
 * comparison with lowercase hex (so an uppercase copy is refused as the SDK refuses it), done
 * timing-safe.
 */
export function verifyWebhookSignature(rawBody: Buffer | string, signature: string | undefined, secret: string | null | undefined): boolean {
  if (!secret || !signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

/** A captured payment of an order, as an `order.paid` or `payment.captured` event reports it. */
export interface CapturedPaymentEvent {
  event: (typeof PAYMENT_CAPTURED_EVENTS)[number];
  orderId: string;
  paymentId: string;
  amountPaise: number;
  currency: string;
}

/**
 * The captured payment an event reports, or null for an event this service does not act on
 * (another kind, or one without an order: e.g. a payment link's). Both events carry
 * `payload.payment.entity` with `id`, `order_id`, `amount`, `currency` and `status`
 * `captured` (https://razorpay.com/docs/webhooks/payloads/payments/).
 */
export function capturedPaymentOf(event: unknown): CapturedPaymentEvent | null {
  const { event: name, payload } = (event ?? {}) as { event?: unknown; payload?: { payment?: { entity?: Record<string, unknown> } } };
  if (!PAYMENT_CAPTURED_EVENTS.includes(name as CapturedPaymentEvent['event'])) return null;
  const payment = payload?.payment?.entity;
  if (!payment || payment.status !== 'captured') return null;
  const { id, order_id: orderId, amount, currency } = payment;
  if (typeof id !== 'string' || typeof orderId !== 'string' || !Number.isInteger(amount) || typeof currency !== 'string') return null;
  return { event: name as CapturedPaymentEvent['event'], orderId, paymentId: id, amountPaise: amount as number, currency };
}
