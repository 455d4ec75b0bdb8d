import { expect } from 'chai';
import type { ProvidersConfig } from '../../config/env';
import { activeOwner, withJson } from './accounts';
import { startApi, type RunningApi, type StartApiOptions } from './api';
import {
  PAYMENT_SIMULATOR_KEY_ID,
  PAYMENT_SIMULATOR_KEY_SECRET,
  PAYMENT_SIMULATOR_WEBHOOK_SECRET,
  startPaymentSimulator,
  type PaymentSimulator,
} from '../../simulators/payments/simulator';

export { PAYMENT_SIMULATOR_KEY_SECRET, PAYMENT_SIMULATOR_WEBHOOK_SECRET };

/** The Razorpay simulator on a free port, and the providers config that points an API at it. */
export async function startPaymentGateway(): Promise<{ gateway: PaymentSimulator; providers: ProvidersConfig }> {
  const gateway = await startPaymentSimulator();
  return {
    gateway,
    providers: {
      telephony: null,
      tts: null,
      llm: null,
      stt: null,
      timeoutMs: 2_000,
      payments: {
        baseUrl: gateway.url,
        keyId: PAYMENT_SIMULATOR_KEY_ID,
        keySecret: PAYMENT_SIMULATOR_KEY_SECRET,
        webhookSecret: PAYMENT_SIMULATOR_WEBHOOK_SECRET,
      },
    },
  };
}

/** The customer pays the order at the simulated checkout; answers the completion body the page would send. */
export async function payAtGateway(gateway: PaymentSimulator, orderId: string): Promise<{ gateway_payment_id: string; signature: string }> {
  const res = await fetch(`${gateway.url}/checkout/orders/${orderId}/pay`, { method: 'POST' });
  if (res.status !== 200) throw new Error(`the simulated checkout answered ${res.status}: ${await res.text()}`);
  const paid = (await res.json()) as { razorpay_payment_id: string; razorpay_signature: string };
  return { gateway_payment_id: paid.razorpay_payment_id, signature: paid.razorpay_signature };
}

/**
 * For a test suite: the Razorpay simulator and an API pointed at it, started before the
 * suite's tests and closed after them. The returned holder is filled in by then. `webhooks`:
 * the simulator sends its webhooks to the API, as a dashboard's webhook URL would.
 */
export function paymentStackPerSuite(options: Pick<StartApiOptions, 'workers' | 'paymentCheckDelaysSeconds'> & { webhooks?: boolean } = {}): {
  api: RunningApi;
  gateway: PaymentSimulator;
} {
  const stack = {} as { api: RunningApi; gateway: PaymentSimulator };
  before(async () => {
    const started = await startPaymentGateway();
    stack.gateway = started.gateway;
    stack.api = await startApi({ providers: started.providers, workers: options.workers, paymentCheckDelaysSeconds: options.paymentCheckDelaysSeconds });
    if (options.webhooks) stack.gateway.webhookUrl = `${stack.api.baseUrl}/api/v1/billing/razorpay/webhook`;
  });
  after(async () => {
    await stack.api?.close();
    await stack.gateway?.close();
  });
  return stack;
}

/** A fresh active owner of a workspace, with headers that name it. */
export async function paymentOwner(api: RunningApi): Promise<{ workspaceId: string; headers: Record<string, string> }> {
  const signedUp = await activeOwner(api, { name: 'Asha Rao' });
  return { workspaceId: signedUp.workspaceId, headers: { ...signedUp.auth, 'X-Workspace-ID': signedUp.workspaceId } };
}

/** `POST /billing/topup`, which must answer 201: the top-up's body. */
export async function startedTopup(api: RunningApi, headers: Record<string, string>, body: unknown) {
  const res = await api.request('/api/v1/billing/topup', withJson('POST', body, headers));
  expect(res.status, await res.clone().text()).to.equal(201);
  return res.json();
}
