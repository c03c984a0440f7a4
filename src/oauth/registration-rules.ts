import { confusableNameProblem } from './client-names.js';
import { redirectUriProblem } from './redirect-uris.js';
import { isScope, MCP_SCOPE, parseScope, SCOPE_NAMES } from './scopes.js';

/** RFC 7591 3.2.2 error codes of the registration endpoint (also used for metadata documents). */
export type RegistrationErrorCode = 'invalid_redirect_uri' | 'invalid_client_metadata';

export interface RegistrationProblem {
  error: RegistrationErrorCode;
  description: string;
}

const MAX_REDIRECT_URIS = 10;
const MAX_REDIRECT_URI_LENGTH = 2000;

/** What every self-registered client is: public, code flow with refresh (docs/oauth.md, Self-registered clients). */
export const SELF_REGISTERED_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export const SELF_REGISTERED_RESPONSE_TYPES = ['code'] as const;

const stringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'string');

/**
 * A client_name, when given: 1 to 120 characters, no control characters, and nothing that hides
 * text or passes for the operator's brand or a checked application (the pages show it;
 * docs/oauth.md, Client names).
 */
export function clientNameProblem(name: unknown, brandName: string): string | null {
  if (name === undefined) return null;
  if (typeof name !== 'string' || name.trim().length < 1 || name.trim().length > 120)
    return 'client_name must be a string of 1 to 120 characters';
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name)) return 'client_name must not contain control characters';
  return confusableNameProblem(name, brandName);
}

/**
 * The client's `application_type`: as it says; when it says nothing, `native` if every redirect
 * URI is an app's own scheme (Cursor registers `cursor://...` and no type: an app, not a web
 * page), else `web`. A launcher scheme is refused either way (redirect-uris.ts).
 */
export function applicationTypeOf(doc: Record<string, unknown>): unknown {
  if (doc.application_type !== undefined) return doc.application_type;
  const uris = doc.redirect_uris;
  const appSchemes =
    stringList(uris) && uris.length > 0 && uris.every((u) => !/^https?:/i.test(u) && /^[a-z][a-z0-9+.-]*:/i.test(u));
  return appSchemes ? 'native' : 'web';
}

/**
 * The metadata rules a registration request and a metadata document share: `application_type`
 * (`web` by default, OpenID Connect Dynamic Client Registration 1.0, 2), redirect URIs (required;
 * https, http on loopback, or for a native app its private-use scheme), and only a public client
 * (`none`) of the code flow. Absent fields take those values; RFC 7591 2 lets the server
 * choose them, and the registration response says what was registered.
 */
export function selfRegisteredMetadataProblem(doc: Record<string, unknown>): RegistrationProblem | null {
  const type = applicationTypeOf(doc);
  if (type !== 'web' && type !== 'native')
    return { error: 'invalid_client_metadata', description: 'application_type must be web or native' };
  const uris = doc.redirect_uris;
  if (uris === undefined) return { error: 'invalid_redirect_uri', description: 'redirect_uris is required' };
  if (!stringList(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS)
    return {
      error: 'invalid_redirect_uri',
      description: `redirect_uris must be an array of 1 to ${MAX_REDIRECT_URIS} strings`,
    };
  for (const uri of uris) {
    if (uri.length > MAX_REDIRECT_URI_LENGTH)
      return { error: 'invalid_redirect_uri', description: `a redirect URI is longer than ${MAX_REDIRECT_URI_LENGTH}` };
    const problem = redirectUriProblem(uri, type);
    if (problem) return { error: 'invalid_redirect_uri', description: `redirect URI ${problem}` };
  }
  const method = doc.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none')
    return {
      error: 'invalid_client_metadata',
      description: 'Only public clients may register: token_endpoint_auth_method must be none',
    };
  const grants = doc.grant_types;
  if (
    grants !== undefined &&
    (!stringList(grants) ||
      !grants.includes('authorization_code') ||
      grants.some((g) => !(SELF_REGISTERED_GRANT_TYPES as readonly string[]).includes(g)))
  )
    return {
      error: 'invalid_client_metadata',
      description: 'grant_types must be authorization_code, optionally with refresh_token',
    };
  const responses = doc.response_types;
  if (
    responses !== undefined &&
    (!stringList(responses) || responses.length === 0 || responses.some((r) => r !== 'code'))
  )
    return { error: 'invalid_client_metadata', description: 'response_types must be code' };
  return null;
}

/**
 * The scopes a self-registered client is registered with: exactly those it asked for in `scope`
 * (least privilege; an unknown one is refused, never dropped), and `tools:call` when it asked for
 * none. A registration request does not say which resource it is for (RFC 7591 has no such
 * field), so every one without a scope is taken for what most of them are: an MCP client, whose
 * resource needs only `tools:call` (docs/oauth.md, Self-registered clients).
 */
export function registeredScopes(doc: Record<string, unknown>): { scopes: string[] } | RegistrationProblem {
  const raw = doc.scope;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === ''))
    return { scopes: [MCP_SCOPE] };
  const scopes = typeof raw === 'string' ? parseScope(raw) : null;
  if (!scopes) return { error: 'invalid_client_metadata', description: 'scope must be a space-separated string' };
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0)
    return {
      error: 'invalid_client_metadata',
      description: `Unknown scope ${unknown.join(' ')}; this server's scopes: ${SCOPE_NAMES.join(' ')}`,
    };
  return { scopes };
}
