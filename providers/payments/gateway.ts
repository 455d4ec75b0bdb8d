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
    const auth = Buffer.from(`${this.config.keyId}:${this.config.keySecret}`).toString('base64');
    let status: number;
    let text: string;
    try {
      const res = await fetch(`${this.config.baseUrl}/v1/orders`, {
        method: 'POST',
        headers: { Authorization: `Basic ${auth}`, 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ amount: order.amountPaise, currency: order.currency, receipt: order.receipt, notes: order.notes }),
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
    const body = parseJson(text) as { id?: unknown; amount?: unknown } | null;
    if (typeof body?.id !== 'string' || body.amount !== order.amountPaise) throw new ProviderUnavailableError(SERVICE, 'answered an order without its id or amount');
    return { orderId: body.id };
  }

  verifyPayment(payment: { orderId: string; paymentId: string; signature: string }): boolean {
    const expected = Buffer.from(paymentSignature(payment.orderId, payment.paymentId, this.config.keySecret), 'hex');
    const given = Buffer.from(payment.signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** No gateway configured: top-ups answer 502, and no signature verifies. */
export function unconfiguredGateway(): PaymentGateway {
  return {
    name: 'none',
    keyId: '',
    createOrder: () => Promise.reject(new ProviderUnavailableError(SERVICE, 'not configured: set PAYMENTS_BASE_URL')),
    verifyPayment: () => false,
  };
}

export function createPaymentGateway(config: Omit<GatewayConfig, 'timeoutMs'> | null | undefined, timeoutMs = 5_000): PaymentGateway {
  return config ? new RazorpayGateway({ ...config, timeoutMs }) : unconfiguredGateway();
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
