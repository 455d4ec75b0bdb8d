import { isDuplicateKeyError } from '../../db/errors';
import { WebhookDefaultSecret } from '../../db/models/webhook-default-secret';
import { newWebhookSecret, secretHint } from './signing';
import { openSecret, sealSecret } from '../../contracts/secret-box';

export interface DefaultSecret {
  secret: string;
  secret_hint: string;
}

/**
 * The workspace's default secret (signs deliveries to agents' `webhook_url`), created on first
 * use. Two first uses racing both insert; the unique `_id` keeps one, and the loser reads it.
 * Stored sealed (docs/decisions/0196); answered opened, for signing.
 */
export async function defaultSecretOf(workspaceId: string, now: Date): Promise<DefaultSecret> {
  const existing = await WebhookDefaultSecret.findById(workspaceId, { secret: 1, secret_hint: 1 }).lean();
  if (existing) return opened(existing);
  const secret = newWebhookSecret();
  try {
    await WebhookDefaultSecret.create({ _id: workspaceId, secret: sealSecret(secret), secret_hint: secretHint(secret), created_at: now });
    return { secret, secret_hint: secretHint(secret) };
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    const winner = await WebhookDefaultSecret.findById(workspaceId, { secret: 1, secret_hint: 1 }).lean();
    if (!winner) throw error;
    return opened(winner);
  }
}

function opened(stored: DefaultSecret): DefaultSecret {
  return { secret: openSecret(stored.secret), secret_hint: stored.secret_hint };
}

/** Replaces the default secret; every later attempt, also of waiting retries, signs with the new one. */
export async function rotateDefaultSecret(workspaceId: string, now: Date): Promise<DefaultSecret> {
  await defaultSecretOf(workspaceId, now);
  const secret = newWebhookSecret();
  await WebhookDefaultSecret.updateOne({ _id: workspaceId }, { $set: { secret: sealSecret(secret), secret_hint: secretHint(secret), rotated_at: now } });
  return { secret, secret_hint: secretHint(secret) };
}
