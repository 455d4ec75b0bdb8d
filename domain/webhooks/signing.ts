import { createHmac, randomBytes } from 'node:crypto';

/** Prefix of every webhook signing secret (endpoint secrets and the workspace default). */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A new signing secret: the prefix and 32 random bytes in base64url (43 characters). */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** What lists show instead of the secret: the prefix, then its first and last four characters. */
export function secretHint(secret: string): string {
  const rest = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  return `${WEBHOOK_SECRET_PREFIX}${rest.slice(0, 4)}...${rest.slice(-4)}`;
}

/**
 * The `X-Service-Signature` value: `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of
 * "<t>.<raw body>">`, keyed with the whole secret string (prefix included), as receivers
 * are told in the README.
 */
export function signatureHeader(secret: string, unixSeconds: number, rawBody: string): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}
