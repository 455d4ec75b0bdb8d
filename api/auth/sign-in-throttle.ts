import { SignInFailure } from '../../activities/db/models/sign-in-failure';
import { HttpError } from '../http-error';

/** The contract's allowance: 5 failed sign-ins per address in 5 minutes; more gives 429. */
export const ALLOWED_FAILURES = 5;
export const FAILURE_WINDOW_MS = 5 * 60_000;

/** Addresses are compared lowercased, as they are stored. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** 429 with `Retry-After` once the address has used its allowance of failures. */
export async function assertSignInAllowed(email: string, now: Date): Promise<void> {
  const record = await SignInFailure.findById(normalizeEmail(email)).lean();
  const recent = (record?.failures ?? []).filter((at) => at.getTime() > now.getTime() - FAILURE_WINDOW_MS);
  if (recent.length < ALLOWED_FAILURES) return;
  const oldest = Math.min(...recent.map((at) => at.getTime()));
  const retryAfter = Math.max(1, Math.ceil((oldest + FAILURE_WINDOW_MS - now.getTime()) / 1000));
  throw new HttpError(429, `too many failed sign-ins for this address; try again in ${retryAfter} seconds`, {}, { 'Retry-After': String(retryAfter) });
}

/** Keeps only the newest failures: older ones can no longer decide anything. */
export async function recordSignInFailure(email: string, now: Date): Promise<void> {
  await SignInFailure.updateOne(
    { _id: normalizeEmail(email) },
    { $push: { failures: { $each: [now], $slice: -ALLOWED_FAILURES } } },
    { upsert: true },
  );
}

export async function clearSignInFailures(email: string): Promise<void> {
  await SignInFailure.deleteOne({ _id: normalizeEmail(email) });
}
