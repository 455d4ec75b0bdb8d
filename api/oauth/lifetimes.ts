/** How long each OAuth credential lives. */
export const OAUTH_LIFETIMES = {
  /** The code travels through the browser once and is exchanged at once. */
  codeSeconds: 120,
  /** Access tokens (`vao_`) are bearer tokens checked on every request: short-lived. */
  accessTokenSeconds: 3600,
  /** Each refresh token (rotated on every use) lapses after this long unused. */
  refreshTokenSeconds: 30 * 24 * 3600,
} as const;
