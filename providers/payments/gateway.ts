import { createHmac, timingSafeEqual } from 'node:crypto';
import { ProviderUnavailableError } from '../errors';

/**
 * A payment gateway in the style of Razorpay: the server creates an order for the amount,
 * the customer pays it at the gateway's checkout, and the checkout hands back the gateway's
 * payment id with a signature, HMAC-SHA256 of `order_id|payment_id` under the key secret,
 * which proves the payment is the gateway's and belongs to that order.
 */
export interface PaymentGateway {
  /** The gateway's name on payments (`razorpay`). */
  readonly name: string;
  /** The public key id the checkout opens the order with. */
  readonly keyId: string;
  createOrder(order: { amountPaise: number; currency: string; receipt: string; notes: Record<string, string> }): Promise<{ orderId: string }>;
  /** Whether `signature` is the gateway's for this order and payment. */
  verifyPayment(payment: { orderId: string; paymentId: string; signature: string }): boolean;
  /**
   * The order as the gateway holds it now, with its captured payment when it is `paid`
   * (`GET /v1/orders/{id}`, then `GET /v1/orders/{id}/payments`): how a page that never came
   * back is found paid (docs/decisions/0186).
   */
  fetchOrder(orderId: string): Promise<GatewayOrder>;
}

/** An order as the gateway reports it; `capturedPayment` only when `status` is `paid`. */
export interface GatewayOrder {
  id: string;
  /** Razorpay's order states: `created`, `attempted` (a payment was tried, none captured), `paid`. */
  status: string;
  amountPaise: number;
  amountPaidPaise: number;
  currency: string;
  capturedPayment: { id: string; amountPaise: number; currency: string } | null;
}

export interface GatewayConfig {
  /** `https://api.razorpay.com`, or a simulator's base URL. */
  baseUrl: string;
  keyId: string;
  keySecret: string;
  timeoutMs: number;
}

const SERVICE = 'payment gateway';

/** The signature the gateway gives a payment of an order: hex HMAC-SHA256 of `order_id|payment_id`. */
export function paymentSignature(orderId: string, paymentId: string, keySecret: string): string {
  return createHmac('sha256', keySecret).update(`${orderId}|${paymentId}`).digest('hex');
}

/** Razorpay's Orders API (`POST /v1/orders`, HTTP Basic auth with the key id and secret). */
export class RazorpayGateway implements PaymentGateway {
  readonly name = 'razorpay';
  readonly keyId: string;

  constructor(private readonly config: GatewayConfig) {
    this.keyId = config.keyId;
  }

  async createOrder(order: { amountPaise: number; currency: string; receipt: string; notes: Record<string, string> }): Promise<{ orderId: string }> {
    const body = (await this.request('POST', '/v1/orders', {
      amount: order.amountPaise,
      currency: order.currency,
      receipt: order.receipt,
      notes: order.notes,
    })) as { id?: unknown; amount?: unknown } | null;
    if (typeof body?.id !== 'string' || body.amount !== order.amountPaise)
      throw new ProviderUnavailableError(SERVICE, 'answered an order without its id or amount');
    return { orderId: body.id };
  }

  async fetchOrder(orderId: string): Promise<GatewayOrder> {
    const path = `/v1/orders/${encodeURIComponent(orderId)}`;
    const order = (await this.request('GET', path)) as { id?: unknown; status?: unknown; amount?: unknown; amount_paid?: unknown; currency?: unknown } | null;
    if (
      order?.id !== orderId ||
      typeof order.status !== 'string' ||
      !Number.isInteger(order.amount) ||
      !Number.isInteger(order.amount_paid) ||
      typeof order.currency !== 'string'
    ) {
      throw new ProviderUnavailableError(SERVICE, 'answered an order without its id, status, amounts or currency');
    }
    const view: GatewayOrder = {
      id: orderId,
      status: order.status,
      amountPaise: order.amount as number,
      amountPaidPaise: order.amount_paid as number,
      currency: order.currency,
      capturedPayment: null,
    };
    if (view.status !== 'paid') return view;
    // A paid order has exactly one captured payment; failed attempts are listed beside it.
    const payments = (await this.request('GET', `${path}/payments`)) as { items?: unknown } | null;
    if (!Array.isArray(payments?.items)) throw new ProviderUnavailableError(SERVICE, "answered an order's payments without items");
    const captured = (payments.items as { id?: unknown; status?: unknown; amount?: unknown; currency?: unknown }[]).find((p) => p?.status === 'captured');
    if (captured && typeof captured.id === 'string' && Number.isInteger(captured.amount) && typeof captured.currency === 'string') {
      view.capturedPayment = { id: captured.id, amountPaise: captured.amount as number, currency: captured.currency };
    }
    return view;
  }

  /** One call to Razorpay's REST API (HTTP Basic auth with the key id and secret); its JSON body, or a ProviderUnavailableError. */
  private async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const auth = Buffer.from(`${this.config.keyId}:${this.config.keySecret}`).toString('base64');
    let status: number;
    let text: string;
    try {
      const res = await fetch(`${this.config.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Basic ${auth}`, Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.config.timeoutMs),
        redirect: 'error',
      });
      status = res.status;
      text = await res.text();
    } catch (err) {
      const error = err as Error;
      throw new ProviderUnavailableError(SERVICE, error.name === 'TimeoutError' ? `no answer within ${this.config.timeoutMs} ms` : 'connection failed');
    }
    if (status < 200 || status > 299) throw new ProviderUnavailableError(SERVICE, `answered ${status}${gatewayError(text)}`);
    return parseJson(text);
  }

  verifyPayment(payment: { orderId: string; paymentId: string; signature: string }): boolean {
    // As the SDK's validatePaymentVerification compares: the lowercase hex string, exactly (here timing-safe).
    if (!/^[0-9a-f]{64}$/.test(payment.signature)) return false;
    const expected = Buffer.from(paymentSignature(payment.orderId, payment.paymentId, this.config.keySecret), 'hex');
    return timingSafeEqual(Buffer.from(payment.signature, 'hex'), expected);
  }
}

/** No gateway configured: top-ups answer 502, and no signature verifies. */
export function unconfiguredGateway(): PaymentGateway {
  return {
    name: 'none',
    keyId: '',
    createOrder: () => Promise.reject(new ProviderUnavailableError(SERVICE, 'not configured: set PAYMENTS_BASE_URL')),
    verifyPayment: () => false,
    fetchOrder: () => Promise.reject(new ProviderUnavailableError(SERVICE, 'not configured: set PAYMENTS_BASE_URL')),
  };
}

export function createPaymentGateway(config: Pick<GatewayConfig, 'baseUrl' | 'keyId' | 'keySecret'> | null | undefined, timeoutMs = 5_000): PaymentGateway {
  return config ? new RazorpayGateway({ baseUrl: config.baseUrl, keyId: config.keyId, keySecret: config.keySecret, timeoutMs }) : unconfiguredGateway();
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** Razorpay's `{error: {description}}`, as `: <description>`, when present. */
function gatewayError(text: string): string {
  const description = (parseJson(text) as { error?: { description?: unknown } } | null)?.error?.description;
  return typeof description === 'string' ? `: ${description.slice(0, 200)}` : '';
}
