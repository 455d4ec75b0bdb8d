/**
 * The per-credential request counter of the current calendar minute, kept on the credential's
 * own document: one atomic update both proves the credential is still valid (not revoked) and
 * counts the request, so every API process shares the count and revocation is immediate.
 */
export const rateWindowFields = {
  /** Requests allowed per minute; set by the platform. */
  rate_limit_per_minute: { type: Number, default: 120 },
  /** Unix seconds at which the counted window began (a multiple of 60). */
  rate_window_start: { type: Number, default: 0 },
  rate_window_count: { type: Number, default: 0 },
};
