import Joi from 'joi';
import { empty, jsonBody, ok, shape, timestamp } from '../http/openapi/declare.js';

/** RFC 6749 5.2 (and RFC 6750 3, RFC 7591 3.2.2): the protocol's own error body. */
export const oauthErrorBody = Joi.object({
  error: Joi.string().required(),
  error_description: Joi.string(),
});
const protocolError = (description: string) => jsonBody(oauthErrorBody, description);
const metadataDocument = (description: string) => ({
  200: jsonBody(Joi.object().unknown(), description),
});

/** What the OAuth endpoints answer (docs/oauth.md), in their RFCs' forms where the RFCs say so. */
export const oauthResponses = {
  token: {
    200: jsonBody(
      Joi.object({
        access_token: Joi.string().required(),
        token_type: Joi.valid('Bearer').required(),
        expires_in: Joi.number().integer().required(),
        refresh_token: Joi.string(),
        scope: Joi.string().allow('').required(),
      }),
      'RFC 6749 5.1: the token response',
    ),
    400: protocolError('invalid_request, invalid_grant, unsupported_grant_type, invalid_scope'),
    401: protocolError('invalid_client'),
    429: protocolError('The endpoint limit of the client or address is exhausted'),
  },
  revoke: {
    200: jsonBody(Joi.object({}), 'RFC 7009 2.2: revoked, or unknown (the same answer)'),
    400: protocolError('invalid_request'),
    401: protocolError('invalid_client'),
    429: protocolError('The endpoint limit of the client or address is exhausted'),
  },
  userinfo: {
    200: jsonBody(
      Joi.object({
        sub: Joi.string().required(),
        email: Joi.string(),
        email_verified: Joi.boolean(),
        name: Joi.string().allow(null),
        preferred_username: Joi.string().allow(null),
      }),
      'The claims the token scopes grant (docs/interface.md, OAuth)',
    ),
    401: protocolError('RFC 6750 3: invalid_request (no token) or invalid_token'),
  },
  register: {
    201: jsonBody(Joi.object().unknown(), 'RFC 7591 3.2.1: the registered client'),
    400: protocolError('RFC 7591 3.2.2: invalid_client_metadata or invalid_redirect_uri'),
    403: protocolError('access_denied: dynamic registration is switched off'),
  },
  grants: ok(
    Joi.array().items(
      shape({
        clientId: Joi.string(),
        clientName: Joi.string(),
        scopes: Joi.array().items(Joi.string()),
        grantedAt: timestamp(),
        updatedAt: timestamp(),
      }),
    ),
  ),
  grantRevoked: ok(shape({ clientId: Joi.string(), revoked: Joi.boolean(), revokedAt: timestamp() })),
  discovery: metadataDocument('RFC 8414 authorization server metadata (the same at the OpenID address)'),
  protectedResource: metadataDocument('RFC 9728 protected resource metadata of the MCP endpoint'),
  preflight: { 204: empty('CORS preflight: GET allowed from any origin, with MCP-Protocol-Version') },
};
