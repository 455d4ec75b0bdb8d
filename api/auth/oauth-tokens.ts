import { newId } from '../../db/ids';
import { OAuthToken } from '../../db/models/oauth-token';
import { hashSecretToken, newSecretToken, OAUTH_TOKEN_PREFIX } from './secret-tokens';

export interface IssueOAuthToken {
  workspaceId: string;
  /** The member who connected the app; the token acts as them, limited to what a key may do. */
  userId: string;
  clientId: string;
  clientName: string;
  ttlSeconds: number;
  now?: Date;
}

/**
 * The access-token store of connected apps (MCP clients). The MCP server's OAuth flow calls
 * `issueOAuthToken` once the member has consented; the token (`vao_...`) is answered once and
 * only its SHA-256 is kept. `api/auth/credentials.ts` validates it on every request.
 */
export async function issueOAuthToken(input: IssueOAuthToken): Promise<{ id: string; token: string; expiresAt: Date }> {
  if (!(input.ttlSeconds > 0)) throw new Error('an access token needs a positive lifetime');
  const token = newSecretToken(OAUTH_TOKEN_PREFIX);
  const now = input.now ?? new Date();
  const expiresAt = new Date(now.getTime() + input.ttlSeconds * 1000);
  const id = newId();
  await OAuthToken.create({
    _id: id,
    workspace_id: input.workspaceId,
    user_id: input.userId,
    client_id: input.clientId,
    client_name: input.clientName,
    token_hash: hashSecretToken(token),
    created_at: now,
    expires_at: expiresAt,
  });
  return { id, token, expiresAt };
}

/** Stops a token at once in every API process. Answers whether it was still active. */
export async function revokeOAuthToken(id: string, now = new Date()): Promise<boolean> {
  const result = await OAuthToken.updateOne({ _id: id, revoked_at: null }, { $set: { revoked_at: now } });
  return result.modifiedCount === 1;
}
