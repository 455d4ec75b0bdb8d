import { User } from '../../db/models/user';
import { matchTotp } from './totp';
import { openSecret } from '../../contracts/secret-box';

interface TwoFactorUser {
  _id: string;
  two_factor?: { secret?: string | null; last_step?: number | null } | null;
}

/**
 * Whether `code` is the user's current TOTP code, spending its step: the step is claimed
 * with a guarded update, so a code works once even across concurrent requests.
 */
export async function spendTotpCode(user: TwoFactorUser, code: string, now: Date): Promise<boolean> {
  const stored = user.two_factor?.secret;
  if (!stored) return false;
  // Stored sealed (docs/decisions/0196); a secret enabled before encryption reads as it is.
  const step = matchTotp(openSecret(stored), code, now, user.two_factor?.last_step ?? null);
  if (step === null) return false;
  const claimed = await User.updateOne(
    { _id: user._id, $or: [{ 'two_factor.last_step': null }, { 'two_factor.last_step': { $lt: step } }] },
    { $set: { 'two_factor.last_step': step } },
  );
  return claimed.modifiedCount === 1;
}
