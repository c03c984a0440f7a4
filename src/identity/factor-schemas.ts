import Joi from 'joi';
import { created, ok, shape, timestamp } from '../http/openapi/declare.js';
import { SINGLE_LINE } from '../lib/text.js';

/** Bodies and answers of the sessions, second-factor and passkey endpoints (docs/identity.md). */

const opaqueToken = Joi.string().trim().min(16).max(512);
/** A TOTP code (6 digits, spaces allowed) or a recovery code (xxxx-xxxx-xxxx): checked by the service. */
const factorCode = Joi.string().trim().min(6).max(32);

/**
 * A WebAuthn credential as @simplewebauthn/browser hands it over (RegistrationResponseJSON or
 * AuthenticationResponseJSON): the library checks the inside; this bounds its size and shape.
 */
const b64url = Joi.string()
  .max(16_384)
  .pattern(/^[A-Za-z0-9_-]*$/, 'base64url');
export const credential = Joi.object({
  id: b64url.max(1024).required(),
  rawId: b64url.max(1024).required(),
  type: Joi.valid('public-key').required(),
  response: Joi.object({
    clientDataJSON: b64url.required(),
    attestationObject: b64url,
    authenticatorData: b64url,
    signature: b64url,
    userHandle: b64url.max(1024).allow(null),
    transports: Joi.array().items(Joi.string().max(32)).max(10),
    publicKeyAlgorithm: Joi.number().integer(),
    publicKey: b64url,
  }).required(),
  clientExtensionResults: Joi.object().unknown(true).default({}),
  authenticatorAttachment: Joi.string().valid('platform', 'cross-platform').allow(null),
});

const passkeyName = Joi.string()
  .trim()
  .min(1)
  .max(60)
  .pattern(SINGLE_LINE)
  .messages({ 'string.pattern.base': '{{#label}} must be a single line without control characters' });

export const sessionParams = Joi.object({ sessionId: Joi.string().guid().required() });
export const passkeyParams = Joi.object({ passkeyId: Joi.string().guid().required() });
export const codeBody = Joi.object({ code: factorCode.required() });
export const mfaLoginBody = Joi.object({ mfaToken: opaqueToken.required(), code: factorCode.required() });
export const stepUpBody = Joi.object({ code: factorCode, credential }).xor('code', 'credential');
export const passkeyRegistrationBody = Joi.object({ credential: credential.required(), name: passkeyName });
export const passkeyOptionsBody = Joi.object({ mfaToken: opaqueToken }).allow(null);
export const passkeySignInBody = Joi.object({ credential: credential.required(), mfaToken: opaqueToken });

const options = Joi.object().unknown(true).description('WebAuthn options JSON, for @simplewebauthn/browser');
const passkey = shape({
  id: Joi.string(),
  name: Joi.string(),
  createdAt: timestamp(),
  lastUsedAt: timestamp().allow(null),
  synced: Joi.boolean(),
});
const recoveryCodes = shape({ recoveryCodes: Joi.array().items(Joi.string()).length(10) });

export const factorResponses = {
  sessions: ok(
    Joi.array().items(
      shape({
        id: Joi.string(),
        current: Joi.boolean(),
        createdAt: timestamp(),
        lastUsedAt: timestamp(),
        userAgent: Joi.string().allow(null),
        ip: Joi.string().allow(null),
      }),
    ),
  ),
  sessionEnded: ok(shape({ id: Joi.string(), revoked: Joi.valid(true) })),
  totpState: ok(
    shape({ enabled: Joi.boolean(), enabledAt: timestamp().allow(null), recoveryCodesLeft: Joi.number().integer() }),
  ),
  totpSetup: ok(shape({ secret: Joi.string(), otpauthUrl: Joi.string() })),
  recoveryCodes: ok(recoveryCodes),
  totpOff: ok(shape({ status: Joi.valid('two_step_off') })),
  stepUp: ok(shape({ factorVerifiedAt: timestamp(), validUntil: timestamp() })),
  options: ok(options),
  passkeys: ok(Joi.array().items(passkey)),
  passkeyCreated: created(passkey),
  passkeyRemoved: ok(shape({ id: Joi.string(), removed: Joi.valid(true) })),
};
