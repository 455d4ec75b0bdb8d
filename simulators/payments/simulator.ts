import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { basicCredentials, startSimulatedService, type RunningSimulator, type SimulatorAnswer, type SimulatorOptions } from '../simulated-service';
import { paymentSignature } from '../../providers/payments/gateway';

export const PAYMENT_SIMULATOR_KEY_ID = 'rzp_test_simulator';
export const PAYMENT_SIMULATOR_KEY_SECRET = 'simulator-key-secret';

export interface SimulatedOrder {
  id: string;
  amount: number;
  currency: string;
  receipt: string;
  notes: Record<string, string>;
  status: 'created' | 'paid';
  payment_id: string | null;
}

export interface PaymentSimulator extends RunningSimulator {
  orders: ReadonlyMap<string, SimulatedOrder>;
}

/**
 * A local stand-in for Razorpay's Orders API, speaking its wire format: `POST /v1/orders`
 * and `GET /v1/orders/{id}` with HTTP Basic auth, errors as `{error: {code, description}}`.
 * `POST /checkout/orders/{id}/pay` plays the customer paying at the checkout: it answers
 * what Razorpay's checkout hands the page (`razorpay_payment_id`, `razorpay_order_id`,
 * `razorpay_signature`), signed with the key secret as Razorpay signs.
 */
export async function startPaymentSimulator(options: SimulatorOptions & { keyId?: string; keySecret?: string } = {}): Promise<PaymentSimulator> {
  const keyId = options.keyId ?? PAYMENT_SIMULATOR_KEY_ID;
  const keySecret = options.keySecret ?? PAYMENT_SIMULATOR_KEY_SECRET;
  const orders = new Map<string, SimulatedOrder>();

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
      return { status: 200, body: { razorpay_payment_id: order.payment_id, razorpay_order_id: order.id, razorpay_signature: paymentSignature(order.id, order.payment_id, keySecret) } };
    }
    if (!authorized(req)) return error(401, 'BAD_REQUEST_ERROR', 'Authentication failed');
    if (req.method === 'POST' && url.pathname === '/v1/orders') return createOrder(body);
    const get = /^\/v1\/orders\/([A-Za-z0-9_]+)$/.exec(url.pathname);
    if (req.method === 'GET' && get) {
      const order = orders.get(get[1]!);
      return order ? { status: 200, body: orderView(order) } : error(400, 'BAD_REQUEST_ERROR', 'The id provided does not exist');
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
    };
    orders.set(order.id, order);
    return { status: 200, body: orderView(order) };
  };

  const running = await startSimulatedService(handle, options);
  return Object.assign(running, { orders });
}

/** 14 characters as Razorpay's ids carry after their prefix. */
function gatewayId(): string {
  return randomBytes(14).toString('base64').replace(/[^A-Za-z0-9]/g, 'x').slice(0, 14);
}

function orderView(order: SimulatedOrder) {
  return {
    id: order.id,
    entity: 'order',
    amount: order.amount,
    amount_paid: order.status === 'paid' ? order.amount : 0,
    amount_due: order.status === 'paid' ? 0 : order.amount,
    currency: order.currency,
    receipt: order.receipt,
    status: order.status,
    attempts: order.status === 'paid' ? 1 : 0,
    notes: order.notes,
  };
}

function error(status: number, code: string, description: string): SimulatorAnswer {
  return { status, body: { error: { code, description } } };
}
