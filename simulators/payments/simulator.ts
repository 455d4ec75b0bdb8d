import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { basicCredentials, startSimulatedService, type RunningSimulator, type SimulatorAnswer, type SimulatorOptions } from '../simulated-service';

// Written from Razorpay's documentation, not from our adapter (providers/payments/*), whose
// signing and parsing it must hold to account:
// - Orders API: https://razorpay.com/docs/api/orders/ (create, fetch, fetch payments)
// - checkout signature: https://razorpay.com/docs/payments/payment-gateway/web-integration/standard/integration-steps/#verify-payment-signature
// - webhooks: https://razorpay.com/docs/webhooks/ (payloads, X-Razorpay-Signature, x-razorpay-event-id)

export const PAYMENT_SIMULATOR_KEY_ID = 'rzp_test_simulator';
export const PAYMENT_SIMULATOR_KEY_SECRET = 'simulator-key-secret';
export const PAYMENT_SIMULATOR_WEBHOOK_SECRET = 'simulator-webhook-secret';

export interface SimulatedOrder {
  id: string;
  amount: number;
  currency: string;
  receipt: string;
  notes: Record<string, string>;
  status: 'created' | 'paid';
  payment_id: string | null;
  created_at: number;
}

/** One webhook delivery as the simulator sent it, and our service's answer. */
export interface SentWebhook {
  eventId: string;
  event: string;
  body: string;
  signature: string;
  status: number;
}

export interface PaymentSimulator extends RunningSimulator {
  orders: ReadonlyMap<string, SimulatedOrder>;
  /** Every webhook delivery, in order. */
  webhooks: SentWebhook[];
  /**
   * Where webhooks go (Razorpay's dashboard setting); null: none are sent. When set, paying
   * at the checkout sends `payment.captured` and `order.paid` for the order, as Razorpay does.
   */
  webhookUrl: string | null;
  /** Sends one event of a paid order (or any `event` name, for events the service ignores) to `webhookUrl`. */
  sendWebhook(orderId: string, event: string): Promise<SentWebhook>;
  /** Delivers a sent event again, byte for byte with the same event id, as Razorpay's retries and dashboard replays do. */
  replayWebhook(sent: SentWebhook): Promise<SentWebhook>;
  /** Resolves once every webhook sent on its own (at payment) has been answered. */
  webhooksSettled(): Promise<void>;
}

export interface PaymentSimulatorOptions extends SimulatorOptions {
  keyId?: string;
  keySecret?: string;
  webhookSecret?: string;
  webhookUrl?: string | null;
}

/**
 * A local stand-in for Razorpay, speaking its wire format: `POST /v1/orders`,
 * `GET /v1/orders/{id}` and `GET /v1/orders/{id}/payments` with HTTP Basic auth, errors as
 * `{error: {code, description}}`. `POST /checkout/orders/{id}/pay` plays the customer paying at
 * the checkout: it captures a payment and answers what Razorpay's checkout hands the page
 * (`razorpay_payment_id`, `razorpay_order_id`, `razorpay_signature`, hex HMAC-SHA256 of
 * `order_id|payment_id` under the key secret), then sends the webhooks when a URL is set.
 */
export async function startPaymentSimulator(options: PaymentSimulatorOptions = {}): Promise<PaymentSimulator> {
  const keyId = options.keyId ?? PAYMENT_SIMULATOR_KEY_ID;
  const keySecret = options.keySecret ?? PAYMENT_SIMULATOR_KEY_SECRET;
  const webhookSecret = options.webhookSecret ?? PAYMENT_SIMULATOR_WEBHOOK_SECRET;
  const orders = new Map<string, SimulatedOrder>();
  const webhooks: SentWebhook[] = [];
  const inFlight = new Set<Promise<unknown>>();

  const authorized = (req: IncomingMessage) => {
    const credentials = basicCredentials(req);
    return credentials?.user === keyId && credentials.password === keySecret;
  };

  const handle = (req: IncomingMessage, url: URL, body: string): SimulatorAnswer => {
    const pay = /^\/checkout\/orders\/([A-Za-z0-9_]+)\/pay$/.exec(url.pathname);
    if (req.method === 'POST' && pay) {
      const order = orders.get(pay[1]!);
      if (!order) return error(404, 'BAD_REQUEST_ERROR', 'The id provided does not exist');
      if (order.status === 'paid') return error(400, 'BAD_REQUEST_ERROR', 'Order has already been paid');
      order.status = 'paid';
      order.payment_id = `pay_${gatewayId()}`;
      return {
        status: 200,
        body: { razorpay_payment_id: order.payment_id, razorpay_order_id: order.id, razorpay_signature: hmacHex(keySecret, `${order.id}|${order.payment_id}`) },
        afterAnswer: () => {
          if (!running.webhookUrl) return;
          // Razorpay sends both events when a payment of an order is captured, in no fixed order.
          for (const event of ['payment.captured', 'order.paid']) track(send(order.id, event).catch(() => undefined));
        },
      };
    }
    if (!authorized(req)) return error(401, 'BAD_REQUEST_ERROR', 'Authentication failed');
    if (req.method === 'POST' && url.pathname === '/v1/orders') return createOrder(body);
    const get = /^\/v1\/orders\/([A-Za-z0-9_]+)(\/payments)?$/.exec(url.pathname);
    if (req.method === 'GET' && get) {
      const order = orders.get(get[1]!);
      if (!order) return error(400, 'BAD_REQUEST_ERROR', 'The id provided does not exist');
      if (!get[2]) return { status: 200, body: orderEntity(order) };
      const items = order.payment_id ? [paymentEntity(order)] : [];
      return { status: 200, body: { entity: 'collection', count: items.length, items } };
    }
    return error(404, 'BAD_REQUEST_ERROR', 'The requested URL was not found on the server.');
  };

  const createOrder = (text: string): SimulatorAnswer => {
    let request: { amount?: unknown; currency?: unknown; receipt?: unknown; notes?: unknown };
    try {
      request = JSON.parse(text) as typeof request;
    } catch {
      return error(400, 'BAD_REQUEST_ERROR', 'The request body is not valid JSON');
    }
    if (!Number.isInteger(request.amount) || (request.amount as number) < 100) return error(400, 'BAD_REQUEST_ERROR', 'The amount must be atleast INR 1.00');
    if (request.currency !== 'INR') return error(400, 'BAD_REQUEST_ERROR', 'Currency is not supported');
    const order: SimulatedOrder = {
      id: `order_${gatewayId()}`,
      amount: request.amount as number,
      currency: 'INR',
      receipt: typeof request.receipt === 'string' ? request.receipt : '',
      notes: (request.notes ?? {}) as Record<string, string>,
      status: 'created',
      payment_id: null,
      created_at: Math.floor(Date.now() / 1000),
    };
    orders.set(order.id, order);
    return { status: 200, body: orderEntity(order) };
  };

  /** One delivery: the event's JSON as bytes, signed over exactly those bytes. */
  const deliver = async (eventId: string, event: string, body: string): Promise<SentWebhook> => {
    if (!running.webhookUrl) throw new Error('no webhook URL is set on the payment simulator');
    const signature = hmacHex(webhookSecret, body);
    const res = await fetch(running.webhookUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Razorpay-Signature': signature, 'x-razorpay-event-id': eventId, 'User-Agent': 'Razorpay-Webhook/v1' },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    const sent = { eventId, event, body, signature, status: res.status };
    webhooks.push(sent);
    return sent;
  };

  const send = (orderId: string, event: string): Promise<SentWebhook> => {
    const order = orders.get(orderId);
    if (!order) throw new Error(`no order ${orderId} at the payment simulator`);
    return deliver(`evt_${gatewayId()}`, event, JSON.stringify(eventEnvelope(order, event)));
  };

  const track = (promise: Promise<unknown>) => {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise));
  };

  const service = await startSimulatedService(handle, options, async () => {
    await Promise.allSettled([...inFlight]);
  });
  const running: PaymentSimulator = Object.assign(service, {
    orders,
    webhooks,
    webhookUrl: options.webhookUrl ?? null,
    sendWebhook: (orderId: string, event: string) => send(orderId, event),
    replayWebhook: (sent: SentWebhook) => deliver(sent.eventId, sent.event, sent.body),
    webhooksSettled: async () => {
      await Promise.allSettled([...inFlight]);
    },
  });
  return running;
}

function hmacHex(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

/** 14 characters as Razorpay's ids carry after their prefix. */
function gatewayId(): string {
  return randomBytes(14)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, 'x')
    .slice(0, 14);
}

function orderEntity(order: SimulatedOrder) {
  return {
    id: order.id,
    entity: 'order',
    amount: order.amount,
    amount_paid: order.status === 'paid' ? order.amount : 0,
    amount_due: order.status === 'paid' ? 0 : order.amount,
    currency: order.currency,
    receipt: order.receipt,
    offer_id: null,
    status: order.status,
    attempts: order.status === 'paid' ? 1 : 0,
    notes: order.notes,
    created_at: order.created_at,
  };
}

/** The order's captured payment, as `GET /v1/payments/{id}` and the webhooks show it (the fields a merchant reads). */
function paymentEntity(order: SimulatedOrder) {
  return {
    id: order.payment_id,
    entity: 'payment',
    amount: order.amount,
    currency: order.currency,
    status: 'captured',
    order_id: order.id,
    invoice_id: null,
    international: false,
    method: 'upi',
    amount_refunded: 0,
    refund_status: null,
    captured: true,
    description: null,
    email: 'customer@example.com',
    contact: '+919000090000',
    notes: order.notes,
    fee: Math.ceil(order.amount * 0.02),
    tax: 0,
    error_code: null,
    error_description: null,
    created_at: order.created_at,
  };
}

/** An event as Razorpay posts it: `payment.captured` carries the payment, `order.paid` the payment and the order. */
function eventEnvelope(order: SimulatedOrder, event: string) {
  const withOrder = event.startsWith('order.');
  return {
    entity: 'event',
    account_id: 'acc_Simulator00001',
    event,
    contains: withOrder ? ['payment', 'order'] : ['payment'],
    payload: {
      ...(order.payment_id ? { payment: { entity: paymentEntity(order) } } : {}),
      ...(withOrder ? { order: { entity: orderEntity(order) } } : {}),
    },
    created_at: Math.floor(Date.now() / 1000),
  };
}

/** Razorpay's error body. */
function error(status: number, code: string, description: string): SimulatorAnswer {
  return { status, body: { error: { code, description } } };
}
