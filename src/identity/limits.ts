/**
 * The interface's limits (docs/interface.md, Limits), row by row (per user, per client IP when anonymous). The OAuth
 * sign-in page charges the login and magic-link rows too: one budget per action, whatever
 * the door. `acrossNodes`: the sign-in, magic-link and one-time-code rows are exact across
 * the nodes of a cluster (docs/postgres.md, Rate limits).
 */
export const SIGN_IN_LIMITS = {
  register: { limit: 10, windowSec: 300 },
  login: { limit: 8, windowSec: 60, acrossNodes: true },
  resendConfirmation: { limit: 5, windowSec: 300 },
  confirmEmail: { limit: 5, windowSec: 300, acrossNodes: true },
  forgotPassword: { limit: 3, windowSec: 300, acrossNodes: true },
  resetPassword: { limit: 5, windowSec: 300, acrossNodes: true },
  exchangeRecoveryCode: { limit: 15, windowSec: 300, acrossNodes: true },
  checkUsername: { limit: 20, windowSec: 60 },
  claimUsername: { limit: 5, windowSec: 60 },
  changeEmail: { limit: 10, windowSec: 60 },
  changePassword: { limit: 10, windowSec: 60 },
  magicLink: { limit: 5, windowSec: 300, acrossNodes: true },
  /** The second step of a sign-in (POST /auth/login/mfa, the pages' code form), per caller like the login. */
  secondFactor: { limit: 8, windowSec: 60, acrossNodes: true },
  /** Every second-factor answer checked for one user, whatever the door or address (docs/identity.md, Attempts). */
  secondFactorPerUser: { limit: 10, windowSec: 300, acrossNodes: true },
  /** Passkey ceremonies' options and answers, per caller. */
  passkeys: { limit: 30, windowSec: 60, acrossNodes: true },
} as const;
