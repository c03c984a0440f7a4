import Joi from 'joi';
import { accepted, created, ok, shape, timestamp } from '../http/openapi/declare.js';
import { SINGLE_LINE } from '../lib/text.js';
import { canonicalEmail } from './email.js';

const wellFormedEmail = Joi.string().email({ tlds: false }).max(254);
/**
 * An email in its canonical form (src/identity/email.ts); look-alikes and invisible characters
 * are refused. One rule, so a bad address gets one error detail.
 */
const email = Joi.string()
  .max(320)
  .custom((value: string, helpers) => {
    const canonical = canonicalEmail(value);
    if (!canonical.ok) return helpers.message({ custom: `{{#label}} ${canonical.reason}` });
    if (wellFormedEmail.validate(canonical.email).error)
      return helpers.message({ custom: '{{#label}} must be a valid email' });
    return canonical.email;
  });
/** Passwords: 8..128 characters; anything beyond that only feeds a denial of service. */
const password = Joi.string().min(8).max(128);
const opaqueToken = Joi.string().trim().min(16).max(512);

export const loginBody = Joi.object({ email: email.required(), password: Joi.string().max(128).required() });
export const refreshBody = Joi.object({ refreshToken: opaqueToken.required() });
export const magicLinkBody = Joi.object({ email: email.required() });
export const tokenBody = Joi.object({ token: opaqueToken.required() });

/** Usernames: 3..32 of a-z, 0-9, ".", "_" and "-", starting and ending with a letter or digit; stored lower-cased. */
const username = Joi.string()
  .trim()
  .lowercase()
  .min(3)
  .max(32)
  .pattern(/^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/, 'letters, digits, ".", "_" or "-"');
/** Names a username may not take: they read as the system speaking. */
export const RESERVED_USERNAMES: ReadonlySet<string> = new Set([
  'admin',
  'administrator',
  'root',
  'system',
  'gantry',
  'support',
  'security',
  'api',
  'oauth',
  'status',
  'help',
  'me',
  'null',
  'undefined',
]);

/** A full name is shown to other people and put into mails: one line, no control characters. */
const fullName = Joi.string()
  .trim()
  .min(1)
  .max(180)
  .pattern(SINGLE_LINE)
  .messages({ 'string.pattern.base': '{{#label}} must be a single line without control characters' });

/** What every new user must be, whatever creates it (sign-up, invitation, the CLI). */
export const newUserRules = Joi.object({
  email: email.required(),
  password: password.allow(null),
  username: username.allow(null),
  fullName: fullName.allow(null),
});

/** The emailed recovery code: six digits. */
const recoveryCode = Joi.string()
  .trim()
  .pattern(/^\d{6}$/, '6 digits');

export const registerBody = Joi.object({
  email: email.required(),
  password: password.required(),
  fullName: fullName.allow(null),
  username: username.allow(null),
});
export const emailBody = Joi.object({ email: email.required() });
export const exchangeRecoveryBody = Joi.object({ email: email.required(), code: recoveryCode.required() });
export const resetPasswordBody = Joi.object({ resetToken: opaqueToken.required(), password: password.required() });
export const checkUsernameQuery = Joi.object({ username: username.required() });
export const claimUsernameBody = Joi.object({ username: username.required() });
export const changeEmailBody = Joi.object({ newEmail: email.required(), password: Joi.string().max(128).required() });
export const changePasswordBody = Joi.object({
  currentPassword: Joi.string().max(128).required(),
  newPassword: password.required(),
});

/** The user of the sign-in API (presenters.ts): never a hash or an internal flag. */
const user = shape({
  id: Joi.string(),
  email: Joi.string(),
  fullName: Joi.string().allow(null),
  username: Joi.string().allow(null),
  avatarUrl: Joi.string().allow(null),
  emailVerified: Joi.boolean(),
  createdAt: timestamp(),
});
/** Login, refresh and magic-link verify (docs/interface.md, Sign-in API). */
const session = shape({
  accessToken: Joi.string(),
  refreshToken: Joi.string(),
  tokenType: Joi.valid('Bearer'),
  expiresIn: Joi.number().integer(),
  user: shape({
    id: Joi.string(),
    email: Joi.string(),
    fullName: Joi.string().allow(null),
    username: Joi.string().allow(null),
  }),
});
const statusOnly = (...values: string[]) => shape({ status: Joi.string().valid(...values) });

export const responses = {
  session: ok(session),
  user: ok(user),
  userInside: ok(shape({ user })),
  registered: created(shape({ user })),
  loggedOut: ok(statusOnly('logged_out')),
  sentIfKnown: accepted(statusOnly('sent_if_known')),
  sentIfUnconfirmed: accepted(statusOnly('sent_if_unconfirmed')),
  resetToken: ok(shape({ resetToken: Joi.string(), expiresIn: Joi.number().integer() })),
  passwordReset: ok(statusOnly('password_reset')),
  usernameAvailable: ok(shape({ username: Joi.string(), available: Joi.boolean() })),
  emailChange: accepted(shape({ status: Joi.valid('confirmation_sent'), newEmail: Joi.string() })),
  passwordChanged: ok(shape({ status: Joi.valid('password_changed'), endedSessions: Joi.number().integer() })),
};
