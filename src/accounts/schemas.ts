import Joi from 'joi';
import { created, envelope, offsetList, ok, shape, timestamp } from '../http/openapi/declare.js';
import { badRequest } from '../http/errors.js';
import { joiDetails } from '../http/validation.js';
import { SINGLE_LINE } from '../lib/text.js';
import { ACCOUNT_STATUSES, ASSIGNABLE_ROLES } from './roles.js';
import { WORKSPACE_ROLES } from './roles.js';

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
export const approvalSettingsBody = Joi.object({ requireApproverSecondFactor: Joi.boolean().strict().required() });
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

const nullableText = () => Joi.string().allow(null, '');
const account = shape({
  id: Joi.string(),
  slug: Joi.string(),
  legalName: Joi.string(),
  displayName: nullableText(),
  status: nullableText(),
  website: nullableText(),
  industry: nullableText(),
  billingEmail: nullableText(),
  defaultTimezone: nullableText(),
  avatarUrl: nullableText(),
  createdAt: timestamp().allow(null),
  updatedAt: timestamp().allow(null),
});
const member = shape({
  accountId: Joi.string(),
  chainerId: Joi.string(),
  role: Joi.string(),
  status: Joi.string().valid('invited', 'active'),
  email: nullableText(),
  fullName: nullableText(),
  username: nullableText(),
  avatarUrl: nullableText(),
  invitedBy: Joi.string().allow(null),
  joinedAt: timestamp().allow(null),
});
const workspace = shape({
  id: Joi.string(),
  accountId: Joi.string(),
  name: Joi.string(),
  isDefault: Joi.boolean(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
});
const invitation = shape({
  id: Joi.string(),
  accountId: Joi.string(),
  email: Joi.string(),
  role: Joi.string(),
  status: Joi.string(),
  invitedBy: Joi.string(),
  sentCount: Joi.number().integer(),
  createdAt: timestamp(),
  expiresAt: timestamp(),
  acceptedAt: timestamp().allow(null),
  revokedAt: timestamp().allow(null),
});
const apiKey = shape({
  id: Joi.string(),
  accountId: Joi.string(),
  ownerChainerId: Joi.string(),
  name: Joi.string(),
  keyPrefix: Joi.string(),
  lastFour: Joi.string(),
  createdAt: timestamp(),
  lastUsedAt: timestamp().allow(null),
  revokedAt: timestamp().allow(null),
});
const transfer = shape({
  id: Joi.string(),
  accountId: Joi.string(),
  fromChainerId: Joi.string(),
  toChainerId: Joi.string(),
  status: Joi.string(),
  createdAt: timestamp(),
  decidedAt: timestamp().allow(null),
});
const auditEntry = shape({
  id: Joi.string(),
  action: Joi.string(),
  actorId: Joi.string().allow(null),
  actorUsername: Joi.string().allow(null),
  targetId: Joi.string().allow(null),
  metadata: Joi.object().unknown(),
  createdAt: timestamp(),
});

/** docs/accounts.md: what each account route answers; `.unknown()` marks answers that add fields per case. */
export const responses = {
  account: ok(account),
  approvalSettings: ok(shape({ requireApproverSecondFactor: Joi.boolean(), updatedAt: timestamp() })),
  accountCreated: created(
    account.keys({ accountType: Joi.string(), defaultWorkspaceId: Joi.string(), ownerChainerId: Joi.string() }),
  ),
  summary: ok(
    shape({
      id: Joi.string(),
      name: Joi.string(),
      slug: Joi.string(),
      role: Joi.string(),
      createdAt: timestamp().allow(null),
      updatedAt: timestamp().allow(null),
    }),
  ),
  deleted: ok(shape({ id: Joi.string(), deletedAt: timestamp() })),
  logs: {
    200: envelope(
      Joi.array().items(auditEntry),
      shape({
        total: Joi.number().integer().optional(),
        limit: Joi.number().integer().optional(),
        hasMore: Joi.boolean(),
        cursor: Joi.string().allow(null),
        hasNextPage: Joi.boolean().optional(),
        nextCursor: Joi.string().allow(null).optional(),
      }),
    ),
  },
  members: offsetList(member),
  member: ok(member),
  memberAdded: created(member),
  memberRemoved: ok(member.unknown(true)),
  workspaces: ok(Joi.array().items(workspace)),
  workspace: ok(workspace),
  workspaceCreated: created(workspace),
  workspaceRemoved: ok(Joi.object().unknown(true)),
  workspaceMembers: ok(Joi.array().items(Joi.object().unknown(true))),
  workspaceMemberAdded: created(Joi.object().unknown(true)),
  workspaceMemberRemoved: ok(Joi.object().unknown(true)),
  invitations: offsetList(invitation),
  invitationCreated: created(invitation.unknown(true)),
  invitation: ok(invitation.unknown(true)),
  invitationAccepted: ok(Joi.object().unknown(true)),
  apiKeys: ok(Joi.array().items(apiKey)),
  apiKeyCreated: created(apiKey.unknown(true)),
  apiKey: ok(apiKey),
  transfer: ok(transfer.allow(null)),
  transferCreated: created(transfer),
};
