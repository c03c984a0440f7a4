import { badRequest } from '../http/errors.js';
import { open, seal } from '../lib/sealed.js';
import type { Secrets } from '../lib/secrets.js';
import type { CredType } from './definitions.js';

/** Spec, "Credential types and required keys". */
export const REQUIRED_KEYS: Record<CredType, readonly string[]> = {
  oauth2: ['access_token'],
  api_key: ['apiKey'],
  basic_auth: ['username', 'password'],
  bearer_token: ['token'],
  connection_string: ['connectionString'],
  custom: [],
};

/** Every value must be a non-empty string; custom takes any key-value pairs (at least one). */
export function assertCredentialKeys(credType: CredType, credentials: Record<string, unknown>): void {
  const missing = REQUIRED_KEYS[credType].filter((k) => typeof credentials[k] !== 'string' || (credentials[k] as string).length === 0);
  if (missing.length > 0) {
    throw badRequest(`credentials for ${credType} need ${missing.join(', ')}`, missing.map((k) => ({ field: `credentials.${k}`, message: `${k} is required for ${credType}`, type: 'any.required' })));
  }
  if (Object.keys(credentials).length === 0) throw badRequest('credentials must hold at least one key', [{ field: 'credentials', message: 'empty', type: 'object.min' }]);
  const notString = Object.entries(credentials).filter(([, v]) => typeof v !== 'string');
  if (notString.length > 0) throw badRequest('credential values must be strings', notString.map(([k]) => ({ field: `credentials.${k}`, message: 'must be a string', type: 'string.base' })));
}

/** The AAD of an instance's credential: a value copied to another instance fails to open. */
export const credentialContext = (instanceId: string, credType: string) => `connector_credentials:${instanceId}:${credType}`;

export function sealCredentials(secrets: Secrets, instanceId: string, credType: string, values: Record<string, string>): string {
  return seal(secrets, JSON.stringify(values), credentialContext(instanceId, credType));
}

export function openCredentials(secrets: Secrets, instanceId: string, credType: string, sealed: string): Record<string, string> {
  return JSON.parse(open(secrets, sealed, credentialContext(instanceId, credType))) as Record<string, string>;
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
    default:
      return {};
  }
}
