import { createHmac, randomBytes } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import Razorpay from 'razorpay';
import { validatePaymentVerification, validateWebhookSignature } from 'razorpay/dist/utils/razorpay-utils';
import { RazorpayGateway } from '../../providers/payments/gateway';
import { capturedPaymentOf, verifyWebhookSignature } from '../../providers/payments/webhooks';
import {
  PAYMENT_SIMULATOR_KEY_ID,
  PAYMENT_SIMULATOR_KEY_SECRET,
  PAYMENT_SIMULATOR_WEBHOOK_SECRET,
  startPaymentSimulator,
  type PaymentSimulator,
} from '../../simulators/payments/simulator';

/**
 * Razorpay's own artefacts hold our adapter (providers/payments) and our simulator
 * (simulators/payments) to account, so that the two cannot merely agree with each other:
 * - the official `razorpay` Node SDK (devDependency, 2.9.6): `validatePaymentVerification` and
 *   `validateWebhookSignature` (dist/utils/razorpay-utils.js) verify what the simulator signs,
 *   and decide exactly as our verification does on genuine, foreign and tampered signatures;
 * - the SDK's REST client (dist/api.js, dist/resources/orders.js), pointed at a local
 *   recorder: our order requests match its method, path, auth and body.
 * What only Razorpay's documentation says (payload shapes, retries) is listed in docs/providers.md.
 */

interface Recorded {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

/** A stand-in for api.razorpay.com that records each request and answers as the Orders API documents. */
async function startRecorder(): Promise<{ url: string; requests: Recorded[]; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const order = {
    id: 'order_Conformance001',
    entity: 'order',
    amount: 11_800,
    amount_paid: 11_800,
    amount_due: 0,
    currency: 'INR',
    receipt: 'r1',
    status: 'paid',
    attempts: 1,
    notes: {},
    created_at: 1_700_000_000,
  };
  const payment = { id: 'pay_Conformance001', entity: 'payment', amount: 11_800, currency: 'INR', status: 'captured', order_id: order.id, captured: true };
  const server = http.createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '').split('?')[0]!;
      requests.push({
        method: req.method!,
        path,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type']?.split(';')[0],
        body: text ? (JSON.parse(text) as unknown) : null,
      });
      const answer = path.endsWith('/payments')
        ? { entity: 'collection', count: 1, items: [payment] }
        : req.method === 'POST'
          ? { ...order, ...(JSON.parse(text) as object), status: 'created', amount_paid: 0 }
          : order;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The SDK's client, its base URL (fixed to https://api.razorpay.com in the SDK) pointed at `url`. */
function sdkClientAt(url: string, keyId: string, keySecret: string): Razorpay {
  const client = new Razorpay({ key_id: keyId, key_secret: keySecret });
  (client.api as unknown as { rq: { defaults: { baseURL: string } } }).rq.defaults.baseURL = url;
  return client;
}

/** A webhook receiver that keeps each request's raw bytes and headers. */
async function startReceiver(): Promise<{ url: string; received: { raw: Buffer; headers: http.IncomingHttpHeaders }[]; close(): Promise<void> }> {
  const received: { raw: Buffer; headers: http.IncomingHttpHeaders }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ raw: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('conformance: Razorpay (the official razorpay SDK against our adapter and simulator)', () => {
  let simulator: PaymentSimulator;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    receiver = await startReceiver();
    simulator = await startPaymentSimulator({ webhookUrl: receiver.url });
  });
  after(async () => {
    await simulator?.close();
    await receiver?.close();
  });

  const payAtCheckout = async (orderId: string) => {
    const res = await fetch(`${simulator.url}/checkout/orders/${orderId}/pay`, { method: 'POST' });
    expect(res.status).to.equal(200);
    return (await res.json()) as { razorpay_payment_id: string; razorpay_order_id: string; razorpay_signature: string };
  };

  describe('signatures', () => {
    it("the SDK's validatePaymentVerification accepts the simulator's checkout signature (and not under another secret)", async () => {
      const sdk = sdkClientAt(simulator.url, PAYMENT_SIMULATOR_KEY_ID, PAYMENT_SIMULATOR_KEY_SECRET);
      const order = (await sdk.orders.create({ amount: 11_800, currency: 'INR', receipt: 'conformance-1' })) as { id: string };
      const paid = await payAtCheckout(order.id);
      expect(paid.razorpay_order_id).to.equal(order.id);
      expect(
        validatePaymentVerification({ order_id: order.id, payment_id: paid.razorpay_payment_id }, paid.razorpay_signature, PAYMENT_SIMULATOR_KEY_SECRET),
      ).to.equal(true);
      expect(validatePaymentVerification({ order_id: order.id, payment_id: paid.razorpay_payment_id }, paid.razorpay_signature, 'another secret')).to.equal(
        false,
      );
    });

    it("the SDK's validateWebhookSignature accepts the simulator's webhooks over their raw bytes (and not under the key secret)", async () => {
      const sdk = sdkClientAt(simulator.url, PAYMENT_SIMULATOR_KEY_ID, PAYMENT_SIMULATOR_KEY_SECRET);
      const order = (await sdk.orders.create({ amount: 20_000, currency: 'INR', receipt: 'conformance-2', notes: { workspace: 'Café ₹' } })) as { id: string };
      await payAtCheckout(order.id);
      await simulator.webhooksSettled();
      const mine = receiver.received.filter((r) => r.raw.toString('utf8').includes(order.id));
      expect(mine.map((r) => (JSON.parse(r.raw.toString('utf8')) as { event: string }).event).sort()).to.deep.equal(['order.paid', 'payment.captured']);
      for (const { raw, headers } of mine) {
        const signature = headers['x-razorpay-signature'] as string;
        expect(headers['x-razorpay-event-id']).to.match(/^evt_/);
        expect(Razorpay.validateWebhookSignature(raw.toString('utf8'), signature, PAYMENT_SIMULATOR_WEBHOOK_SECRET)).to.equal(true);
        expect(validateWebhookSignature(raw.toString('utf8'), signature, PAYMENT_SIMULATOR_KEY_SECRET)).to.equal(false);
        // And our adapter reads the event the way the docs' payloads put it.
        const captured = capturedPaymentOf(JSON.parse(raw.toString('utf8')));
        expect(captured).to.include({ orderId: order.id, amountPaise: 20_000, currency: 'INR' });
      }
    });

    it("our webhook check decides as the SDK's validateWebhookSignature does: genuine, another secret, tampered, truncated", () => {
      for (let i = 0; i < 50; i += 1) {
        const secret = randomBytes(12).toString('base64');
        const body = JSON.stringify({ event: 'order.paid', n: i, note: 'नमस्ते ₹ café', payload: { bytes: randomBytes(8).toString('hex') } });
        // Razorpay's algorithm as its docs state it, which the SDK is then asked to confirm.
        const genuine = createHmac('sha256', secret).update(body).digest('hex');
        const candidates = [
          genuine,
          createHmac('sha256', `${secret}x`).update(body).digest('hex'),
          genuine.slice(0, 63) + (genuine[63] === '0' ? '1' : '0'),
          genuine.slice(0, 40),
          genuine.toUpperCase(),
        ];
        for (const signature of candidates) {
          const sdk = validateWebhookSignature(body, signature, secret);
          expect(verifyWebhookSignature(Buffer.from(body, 'utf8'), signature, secret), `${i}: ${signature}`).to.equal(sdk);
        }
        expect(validateWebhookSignature(body, genuine, secret)).to.equal(true);
      }
    });

    it("our payment check decides as the SDK's validatePaymentVerification does", () => {
      const gateway = new RazorpayGateway({ baseUrl: 'http://127.0.0.1:9', keyId: 'rzp_test_x', keySecret: 'key-secret', timeoutMs: 1_000 });
      for (let i = 0; i < 50; i += 1) {
        const orderId = `order_${randomBytes(7).toString('hex')}`;
        const paymentId = `pay_${randomBytes(7).toString('hex')}`;
        const genuine = createHmac('sha256', 'key-secret').update(`${orderId}|${paymentId}`).digest('hex');
        for (const [order, payment, signature] of [
          [orderId, paymentId, genuine],
          [orderId, `${paymentId}x`, genuine],
          [`${orderId}x`, paymentId, genuine],
          [orderId, paymentId, createHmac('sha256', 'other').update(`${orderId}|${paymentId}`).digest('hex')],
          [orderId, paymentId, genuine.slice(1)],
          [orderId, paymentId, genuine.toUpperCase()],
        ] as const) {
          const sdk = validatePaymentVerification({ order_id: order, payment_id: payment }, signature, 'key-secret');
          expect(gateway.verifyPayment({ orderId: order, paymentId: payment, signature }), `${order} ${payment}`).to.equal(sdk);
        }
      }
    });
  });

  describe("requests, compared with the SDK client's", () => {
    it('creating an order: POST /v1/orders, Basic key id:secret, a JSON body with the same fields', async () => {
      const recorder = await startRecorder();
      try {
        const notes = { workspace_id: 'w1', payment_id: 'p1' };
        await sdkClientAt(recorder.url, 'rzp_test_key', 'key-secret').orders.create({ amount: 11_800, currency: 'INR', receipt: 'p1', notes });
        await new RazorpayGateway({ baseUrl: recorder.url, keyId: 'rzp_test_key', keySecret: 'key-secret', timeoutMs: 2_000 }).createOrder({
          amountPaise: 11_800,
          currency: 'INR',
          receipt: 'p1',
          notes,
        });
        const [sdk, ours] = recorder.requests;
        expect(ours).to.deep.equal(sdk);
        expect(sdk).to.deep.include({ method: 'POST', path: '/v1/orders', contentType: 'application/json' });
        expect(sdk!.authorization).to.equal(`Basic ${Buffer.from('rzp_test_key:key-secret').toString('base64')}`);
      } finally {
        await recorder.close();
      }
    });

    it("fetching an order and its payments: GET /v1/orders/{id} and /v1/orders/{id}/payments, as the SDK's fetch and fetchPayments", async () => {
      const recorder = await startRecorder();
      try {
        const sdk = sdkClientAt(recorder.url, 'rzp_test_key', 'key-secret');
        await sdk.orders.fetch('order_Conformance001');
        await sdk.orders.fetchPayments('order_Conformance001');
        const fetched = await new RazorpayGateway({ baseUrl: recorder.url, keyId: 'rzp_test_key', keySecret: 'key-secret', timeoutMs: 2_000 }).fetchOrder(
          'order_Conformance001',
        );
        expect(fetched).to.deep.equal({
          id: 'order_Conformance001',
          status: 'paid',
          amountPaise: 11_800,
          amountPaidPaise: 11_800,
          currency: 'INR',
          capturedPayment: { id: 'pay_Conformance001', amountPaise: 11_800, currency: 'INR' },
        });
        const [sdkOrder, sdkPayments, ourOrder, ourPayments] = recorder.requests;
        expect(ourOrder).to.deep.equal(sdkOrder);
        expect(ourPayments).to.deep.equal(sdkPayments);
        expect(sdkOrder).to.deep.include({ method: 'GET', path: '/v1/orders/order_Conformance001', body: null });
        expect(sdkPayments).to.deep.include({ method: 'GET', path: '/v1/orders/order_Conformance001/payments', body: null });
      } finally {
        await recorder.close();
      }
    });

    it("the simulator answers the SDK client's order requests as Razorpay's API does", async () => {
      const sdk = sdkClientAt(simulator.url, PAYMENT_SIMULATOR_KEY_ID, PAYMENT_SIMULATOR_KEY_SECRET);
      const created = (await sdk.orders.create({ amount: 5_000, currency: 'INR', receipt: 'conformance-3' })) as {
        id: string;
        status: string;
        amount_due: number;
      };
      expect(created).to.include({ status: 'created', amount_due: 5_000 });
      expect(((await sdk.orders.fetchPayments(created.id)) as { items: unknown[] }).items).to.deep.equal([]);
      const paid = await payAtCheckout(created.id);
      expect(await sdk.orders.fetch(created.id)).to.include({ id: created.id, status: 'paid', amount_paid: 5_000, amount_due: 0 });
      const payments = (await sdk.orders.fetchPayments(created.id)) as {
        entity: string;
        count: number;
        items: { id: string; status: string; order_id: string }[];
      };
      expect(payments).to.include({ entity: 'collection', count: 1 });
      expect(payments.items[0]).to.include({ id: paid.razorpay_payment_id, status: 'captured', order_id: created.id });
      // Wrong credentials: the SDK sees Razorpay's error shape.
      const refused = await sdkClientAt(simulator.url, PAYMENT_SIMULATOR_KEY_ID, 'wrong')
        .orders.fetch(created.id)
        .catch((error: unknown) => error);
      expect(refused).to.deep.include({ statusCode: 401 });
      expect((refused as { error: { code: string } }).error.code).to.equal('BAD_REQUEST_ERROR');
    });
  });
});
