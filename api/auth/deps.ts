import type { AuthConfig } from '../../config/env';
import type { SessionTokens } from './session-tokens';

/** What the account and sign-in routes need, built once per app. */
export interface AuthDeps {
  config: AuthConfig;
  tokens: SessionTokens;
  welcomeCreditsPaise: number;
  now: () => Date;
}
