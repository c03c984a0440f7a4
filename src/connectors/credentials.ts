import { badRequest } from '../http/errors.js';
import { open, seal } from '../lib/sealed.js';
import type { Secrets } from '../lib/secrets.js';
import type { CredType } from './types.js';
import { credentialContext } from './sealing.js';

/** docs/connectors.md, credential types and their required keys. */
const REQUIRED_KEYS: Record<CredType, readonly string[]> = {
  oauth2: ['access_token'],
  api_key: ['apiKey'],
  basic_auth: ['username', 'password'],
  bearer_token: ['token'],
  connection_string: ['connectionString'],
  custom: [],
};

/** Every value must be a non-empty string; custom takes any key-value pairs (at least one). */
export function assertCredentialKeys(credType: CredType, credentials: Record<string, unknown>): void {
  const missing = REQUIRED_KEYS[credType].filter(
    (k) => typeof credentials[k] !== 'string' || (credentials[k] as string).length === 0,
  );
  if (missing.length > 0) {
    throw badRequest(
      `credentials for ${credType} need ${missing.join(', ')}`,
      missing.map((k) => ({
        field: `credentials.${k}`,
        message: `${k} is required for ${credType}`,
        type: 'any.required',
      })),
    );
  }
  if (Object.keys(credentials).length === 0)
    throw badRequest('credentials must hold at least one key', [
      { field: 'credentials', message: 'empty', type: 'object.min' },
    ]);
  const notString = Object.entries(credentials).filter(([, v]) => typeof v !== 'string');
  if (notString.length > 0)
    throw badRequest(
      'credential values must be strings',
      notString.map(([k]) => ({ field: `credentials.${k}`, message: 'must be a string', type: 'string.base' })),
    );
}

export function sealCredentials(
  secrets: Secrets,
  instanceId: string,
  credType: string,
  values: Record<string, string>,
  origin: string | null = null,
): string {
  return seal(secrets, JSON.stringify(values), credentialContext(instanceId, credType, origin));
}

export function openCredentials(
  secrets: Secrets,
  instanceId: string,
  credType: string,
  sealed: string,
  origin: string | null = null,
): Record<string, string> {
  return JSON.parse(open(secrets, sealed, credentialContext(instanceId, credType, origin))) as Record<string, string>;
}

/** The origin (scheme://host:port, RFC 6454 §4) of an http(s) URL; null for anything else. */
/**
 * What an MCP server's credentials are bound to (docs/connectors.md, Bound to a server): its
 * url's origin and path, without the query. One host may serve several MCP servers, one a path
 * (docs/security.md, N-L3), so a credential entrusted to one path never goes to another.
 */
export function credentialTargetOf(url: unknown): string | null {
  const origin = originOf(url);
  return origin === null ? null : `${origin}${new URL(String(url)).pathname}`;
}

/**
 * Whether a stored binding admits a url: its target exactly. A binding stored before targets
 * (an origin alone, no path) admits the same origin, as it did; the url's path can still only
 * change by an update, which drops the credentials (instances.ts).
 */
export function boundTo(binding: string, url: unknown): boolean {
  return originOf(binding) === binding ? binding === originOf(url) : binding === credentialTargetOf(url);
}

export function originOf(url: unknown): string | null {
  try {
    const parsed = new URL(String(url));
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

/**
 * Header names that by convention carry a secret (Authorization, Cookie, X-API-Key,
 * X-Auth-Token, Api-Key, X-Access-Token, X-Session-Id, X-Hub-Signature...). Matched as words
 * inside the name, so new spellings are caught too; a false positive only means the value
 * goes through the sealed credentials (credType custom) instead of the plain config.
 */
const CREDENTIAL_HEADER_WORDS =
  /token|secret|key|auth|session|passw|passcode|pwd|cookie|signature|credential|jwt|bearer|private/i;

/** A header name as RFC 9110 §5.6.2 allows it (a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The config of an MCP instance is stored as is and shown to every member, so its headers
 * must not carry secrets: one detail per refused name (config.headers.<name>).
 */
export function credentialHeaderDetails(headers: unknown): Array<{ field: string; message: string; type: string }> {
  if (typeof headers !== 'object' || headers === null) return [];
  return Object.keys(headers)
    .filter((name) => CREDENTIAL_HEADER_WORDS.test(name))
    .map((name) => ({
      field: `config.headers.${name}`,
      message:
        'looks like a credential header: store the value through /credentials (credType custom), not in the config',
      type: 'config.credentialHeader',
    }));
}

/** Outbound auth headers for an instance's credential (MCP calls, OAuth check URLs). */
export function authHeaders(credType: string, values: Record<string, string>): Record<string, string> {
  switch (credType) {
    case 'oauth2':
      return { authorization: `Bearer ${values.access_token}` };
    case 'bearer_token':
      return { authorization: `Bearer ${values.token}` };
    case 'api_key':
      return { 'x-api-key': values.apiKey };
    case 'basic_auth':
      return { authorization: `Basic ${Buffer.from(`${values.username}:${values.password}`).toString('base64')}` };
    case 'custom':
      // Each key is a header name (X-Auth-Token...): the sealed home of the headers the
      // config refuses. Keys that are not header names are not sent.
      return Object.fromEntries(Object.entries(values).filter(([name]) => HEADER_NAME.test(name)));
    default:
      return {};
  }
}
