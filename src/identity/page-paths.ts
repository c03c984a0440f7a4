/**
 * Where identity's pages are, for the links of every domain's pages (docs/kernel.md, Pages: no
 * dead ends).
 */

/** The account center: it asks a browser without a session to sign in first. */
export const ACCOUNT_PAGE = '/account';
/** "Forgot your password?" (optionally `?return_to=` the page to go back to). */
export const FORGOT_PASSWORD_PAGE = '/auth/forgot-password';
/** The form that mails a new confirmation link. */
export const RESEND_CONFIRMATION_PAGE = '/auth/confirm-email/resend';
