import Joi from 'joi';
import { badRequest } from '../http/errors.js';
import { joiDetails } from '../http/validation.js';
import { SINGLE_LINE } from '../lib/text.js';
import { ACCOUNT_STATUSES, ASSIGNABLE_ROLES } from './roles.js';
import { WORKSPACE_ROLES } from './workspaces.js';

/** docs/accounts.md: slug 3-64 chars, ^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$ (the pattern alone bounds the length). */
const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/** An IANA zone name (Region/City, or UTC-like names) that this runtime's ICU knows. */
function isIanaTimeZone(value: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const timeZone = Joi.string()
  .max(120)
  .custom((value: string, helpers) => (isIanaTimeZone(value) ? value : helpers.error('any.invalid')))
  .messages({ 'any.invalid': '{{#label}} must be a valid IANA time zone (e.g. Europe/Berlin)' });
const url = Joi.string()
  .max(2048)
  .uri({ scheme: ['http', 'https'] });
/** Names go into mails and pages: one line, no control characters (docs/accounts.md, Validation). */
const name = Joi.string()
  .trim()
  .pattern(SINGLE_LINE)
  .messages({ 'string.pattern.base': '{{#label}} must be a single line without control characters' });

const accountFields = {
  slug: Joi.string().min(3).max(64).pattern(SLUG_PATTERN).messages({
    'string.pattern.base': '{{#label}} must be lower-case letters, digits and inner hyphens (3-64 characters)',
  }),
  legalName: name.min(2).max(180),
  displayName: name.min(1).max(180).allow(null),
  website: url.allow(null),
  industry: name.min(1).max(120).allow(null),
  billingEmail: Joi.string().max(254).email({ tlds: false }).allow(null),
  defaultTimezone: timeZone.allow(null),
  avatarUrl: url.allow(null),
};

/** POST /accounts: slug and legalName required, no status. */
export const createAccountBody = Joi.object({
  ...accountFields,
  slug: accountFields.slug.required(),
  legalName: accountFields.legalName.required(),
});

/** PATCH /accounts/:id: all optional; status is checked by the service (only active or suspended). */
export const updateAccountBody = Joi.object({ ...accountFields, status: Joi.string().valid(...ACCOUNT_STATUSES) }).min(
  1,
);

const assignableRole = Joi.string().valid(...ASSIGNABLE_ROLES);
export const addMemberBody = Joi.object({
  chainerId: Joi.string().guid().required(),
  role: assignableRole.default('member'),
});
export const changeRoleBody = Joi.object({ role: assignableRole.required() });
export const inviteBody = Joi.object({
  email: Joi.string().trim().max(254).email({ tlds: false }).required(),
  role: assignableRole.default('member'),
});
export const tokenBody = Joi.object({ token: Joi.string().min(10).max(512).required() });
export const workspaceBody = Joi.object({ name: Joi.string().trim().min(1).max(120).required() });
export const workspaceMemberBody = Joi.object({
  chainerId: Joi.string().guid().required(),
  role: Joi.string()
    .valid(...WORKSPACE_ROLES)
    .default('member'),
});
export const apiKeyBody = Joi.object({ name: Joi.string().trim().min(1).max(120).required() });
export const transferBody = Joi.object({ chainerId: Joi.string().guid().required() });
/** Only the literal `true` releases the seat (docs/interface.md, Resources); anything but true/false is refused. */
export const removeMemberQuery = Joi.object({ releaseSeat: Joi.string().valid('true', 'false').default('false') });

export const id = Joi.string().guid().required();

/** The same rules for the CLI: validates with a route schema and throws 400 like the route would. */
export function validate<T>(schema: Joi.ObjectSchema, value: unknown): T {
  const result = schema.validate(value, { abortEarly: false, stripUnknown: false });
  if (result.error) {
    const details = joiDetails(result.error.details);
    throw badRequest(`Invalid input: ${details.map((d) => d.message).join('; ')}`, details);
  }
  return result.value as T;
}
