import type { Config } from '../config.js';
import type { MailMessage } from '../lib/mailer.js';

/**
 * The mails of the sign-in flows. Every link points at Gantry's own pages (docs/interface.md,
 * Sign-in API); every subject and body names the operator's brand (GANTRY_BRAND_NAME,
 * docs/operations.md, Branding), as the pages do.
 */
export function confirmationMail(config: Config, to: string, token: string): MailMessage {
  const link = `${config.publicUrl}/auth/confirm-email?token=${encodeURIComponent(token)}`;
  const brand = config.brand.name;
  return {
    to,
    kind: 'email_confirmation',
    subject: `Confirm your email for ${brand}`,
    text: `Open this link to confirm your email address. It works once and expires in 24 hours.\n\n${link}\n\nIf you did not sign up for ${brand}, do not confirm: ignore this mail. To use ${brand} with this address anyway, sign in with an emailed link or reset the password; either one discards a password you did not choose.`,
  };
}

export function emailChangeMail(config: Config, to: string, token: string): MailMessage {
  const link = `${config.publicUrl}/auth/confirm-email?token=${encodeURIComponent(token)}`;
  const brand = config.brand.name;
  return {
    to,
    kind: 'email_change',
    subject: `Confirm your new email for ${brand}`,
    text: `Someone asked to use this address for their ${brand} account. Open this link to confirm; it works once and expires in 24 hours.\n\n${link}\n\nUntil you do, nothing changes. If it was not you, ignore this mail.`,
  };
}

export function emailChangeNoticeMail(config: Config, to: string, newEmail: string): MailMessage {
  const brand = config.brand.name;
  return {
    to,
    kind: 'email_change_notice',
    subject: `Your ${brand} email is about to change`,
    text: `A change of your ${brand} sign-in email to ${newEmail} was requested. It takes effect only once the new address confirms it.\n\nIf it was not you, change your password now.`,
  };
}

export function recoveryMail(config: Config, to: string, code: string): MailMessage {
  const link = `${config.publicUrl}/auth/reset-password?email=${encodeURIComponent(to)}&code=${encodeURIComponent(code)}`;
  return {
    to,
    kind: 'password_recovery',
    subject: `Your ${config.brand.name} password reset code`,
    text: `Your ${config.brand.name} password reset code is ${code}. It works once and expires in 15 minutes.\n\nEnter it in the app, or open this page to choose a new password:\n${link}\n\nIf you did not ask for it, ignore this mail: your password stays as it is.`,
  };
}

export function passwordChangedMail(config: Config, to: string): MailMessage {
  const brand = config.brand.name;
  return {
    to,
    kind: 'password_changed',
    subject: `Your ${brand} password was changed`,
    text: `The password of your ${brand} account was just changed. Your other sessions were signed out, and the apps you had connected lost their access: allow them again the next time they ask.\n\nIf it was not you, reset your password now: ${config.publicUrl}/auth/forgot-password`,
  };
}

/** The sign-in link (src/identity/magic-links.ts). */
export function magicLinkMail(config: Config, to: string, secret: string): MailMessage {
  const link = `${config.publicUrl}/auth/magic?token=${encodeURIComponent(secret)}`;
  const brand = config.brand.name;
  return {
    to,
    kind: 'magic_link',
    subject: `Your ${brand} sign-in link`,
    text: `Open this link to sign in to ${brand}. It works once and expires in 15 minutes.\n\n${link}\n\nIf you did not ask for it, ignore this mail.`,
  };
}
