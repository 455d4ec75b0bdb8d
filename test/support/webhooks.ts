import { webcrypto } from 'node:crypto';
import { newId } from '../../db/ids';
import { WebhookEndpoint } from '../../db/models/webhook-endpoint';
import { newEndpointId } from '../../domain/webhooks/ids';
import { newWebhookSecret, secretHint } from '../../domain/webhooks/signing';
import { sealSecret } from '../../contracts/secret-box';
import type { ReceivedWebhook } from './webhook-receiver';

/** An endpoint stored directly, its secret sealed as the API stores it (workflow tests run without the API). */
export async function storedEndpoint(options: { workspaceId?: string; url: string; events?: string[]; active?: boolean; slot?: number }) {
  const secret = newWebhookSecret();
  const now = new Date();
  const endpoint = await WebhookEndpoint.create({
    _id: newEndpointId(),
    workspace_id: options.workspaceId ?? newId(),
    slot: options.slot ?? 0,
    url: options.url,
    events: options.events ?? ['*'],
    active: options.active ?? true,
    secret: sealSecret(secret),
    secret_hint: secretHint(secret),
    created_by: { user_id: null, name: 'test' },
    created_at: now,
    updated_at: now,
  });
  return { id: endpoint._id as string, workspaceId: endpoint.workspace_id, secret };
}

/**
 * A receiver's signature check, written apart from the service's signing code (WebCrypto
 * instead of node's createHmac, its own parsing), as a customer would write it from the
 * docs/api-guide.md: split the header into `t` and `v1`, refuse a `t` more than 300 s from now, and
 * compare HMAC-SHA256("<t>.<raw body>") in constant time.
 */
export async function receiverAccepts(
  request: Pick<ReceivedWebhook, 'headers' | 'rawBody'>,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<boolean> {
  const header = request.headers['x-service-signature'];
  if (typeof header !== 'string') return false;
  const parts = new Map(header.split(',').map((part) => part.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300 || !/^[0-9a-f]{64}$/.test(v1)) return false;
  const key = await webcrypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const given = Uint8Array.from(v1.match(/../g)!.map((byte) => parseInt(byte, 16)));
  // verify() compares in constant time.
  return webcrypto.subtle.verify('HMAC', key, given, new TextEncoder().encode(`${t}.${request.rawBody}`));
}
