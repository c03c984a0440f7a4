import type { Config } from '../config.js';
import type { MailMessage } from '../lib/mailer.js';

/**
 * Notices of a change to how an account signs in (docs/identity.md): sent to the account's
 * address, so that a change someone else made with a stolen session is seen.
 */
const accountLink = (config: Config) => `${config.publicUrl}/account`;

export function twoStepOnMail(config: Config, to: string): MailMessage {
  return {
    to,
    kind: 'two_step_on',
    subject: `Two-step sign-in is on for your ${config.brand.name} account`,
    text: `Two-step sign-in was turned on for your ${config.brand.name} account: signing in now also asks for a code from your authenticator app. Keep your recovery codes somewhere safe.\n\nIf it was not you, reset your password and check your account: ${accountLink(config)}`,
  };
}

export function twoStepOffMail(config: Config, to: string): MailMessage {
  return {
    to,
    kind: 'two_step_off',
    subject: `Two-step sign-in is off for your ${config.brand.name} account`,
    text: `Two-step sign-in was turned off for your ${config.brand.name} account: signing in asks only for your password or a sign-in link again.\n\nIf it was not you, reset your password and check your account: ${accountLink(config)}`,
  };
}

export function passkeyAddedMail(config: Config, to: string, name: string): MailMessage {
  return {
    to,
    kind: 'passkey_added',
    subject: `A passkey was added to your ${config.brand.name} account`,
    text: `A passkey ("${name}") was added to your ${config.brand.name} account. It can sign in without your password.\n\nIf it was not you, remove it and reset your password: ${accountLink(config)}`,
  };
}

export function factorsResetMail(config: Config, to: string): MailMessage {
  return {
    to,
    kind: 'second_factors_reset',
    subject: `Your ${config.brand.name} sign-in was reset by an administrator`,
    text: `An administrator removed two-step sign-in and every passkey from your ${config.brand.name} account, and signed out all its sessions. Sign in with your password or a sign-in link, then set up two-step sign-in again: ${accountLink(config)}\n\nIf you did not ask for this, contact your administrator.`,
  };
}
