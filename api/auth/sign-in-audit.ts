import type { Request } from 'express';
import { recordUserAudit, recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { clientIp } from './sessions';
import { normalizeEmail } from './sign-in-throttle';

/**
 * Audits a failed check of a secret (sign-in, second factor, accepting an invite). For a
 * known account it reaches every workspace of the person; an unknown address is kept
 * without a workspace.
 */
export async function auditFailedSignIn(req: Request, email: string, user: { _id: string } | null, reason: string, now: Date): Promise<void> {
  const record = {
    action: 'auth.sign_in_failed',
    actor: { type: 'anonymous' as const, id: null, name: null },
    target: { type: 'user', id: user?._id ?? null, name: normalizeEmail(email) },
    at: now,
    ip: clientIp(req),
    details: { reason: user ? reason : 'unknown address' },
  };
  if (user) await recordUserAudit(user._id, record);
  else await recordWorkspaceAudit(null, record);
}
