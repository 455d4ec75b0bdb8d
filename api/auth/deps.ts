import type { AuthConfig } from '../../config/env';
import type { SessionTokens } from './session-tokens';
import type { WorkspaceCache } from './workspace-cache';
import type { AddressLimiter } from './address-limits';

/** What the account and sign-in routes need, built once per app. */
export interface AuthDeps {
  config: AuthConfig;
  tokens: SessionTokens;
  welcomeCreditsPaise: number;
  now: () => Date;
  /** The workspaces keys and app tokens act in, reused for a moment (decision 0151). */
  workspaces: WorkspaceCache;
  /** Attempts per caller address (and sign-ups per email) in this process (decision 0172). */
  addressLimiter: AddressLimiter;
}
