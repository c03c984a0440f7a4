import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import type { OAuthClients } from './clients.js';
import { redirectHostOf, type ApplicationType } from './redirect-uris.js';
import {
  applicationTypeOf,
  clientNameProblem,
  registeredScopes,
  SELF_REGISTERED_GRANT_TYPES,
  SELF_REGISTERED_RESPONSE_TYPES,
  selfRegisteredMetadataProblem,
  type RegistrationErrorCode,
} from './registration-rules.js';
import { formatScope } from './scopes.js';

/** An RFC 7591 3.2.2 error: `{error, error_description}` with 400. */
export class RegistrationError extends Error {
  constructor(
    readonly error: RegistrationErrorCode,
    readonly description: string,
  ) {
    super(description);
    this.name = 'RegistrationError';
  }

  body() {
    return { error: this.error, error_description: this.description };
  }
}

/** The RFC 7591 3.2.1 answer: the client's metadata as registered. */
export interface RegistrationResponse {
  client_id: string;
  client_id_issued_at: number;
  application_type: ApplicationType;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
  scope: string;
}

/**
 * RFC 7591 dynamic client registration, for public clients only (docs/oauth.md,
 * Self-registered clients). Unknown metadata is ignored (RFC 7591 2); what was registered is
 * what the response lists.
 */
export function createRegistration(kernel: Pick<Kernel, 'config' | 'logger'>, clients: OAuthClients) {
  const { config, logger } = kernel;
  return {
    enabled: config.oauthDynamicRegistration,

    async register(body: unknown): Promise<RegistrationResponse> {
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new RegistrationError('invalid_client_metadata', 'The request body must be a JSON object');
      const doc = body as Record<string, unknown>;
      if (doc.client_id !== undefined || doc.client_secret !== undefined)
        throw new RegistrationError('invalid_client_metadata', 'client_id and client_secret are assigned, not chosen');
      const problem = selfRegisteredMetadataProblem(doc);
      if (problem) throw new RegistrationError(problem.error, problem.description);
      const nameProblem = clientNameProblem(doc.client_name, config.brand.name);
      if (nameProblem) throw new RegistrationError('invalid_client_metadata', nameProblem);
      const scope = registeredScopes(doc);
      if ('error' in scope) throw new RegistrationError(scope.error, scope.description);
      const redirectUris = [...new Set(doc.redirect_uris as string[])];
      const name = typeof doc.client_name === 'string' ? doc.client_name.trim() : redirectHostOf(redirectUris[0]);
      const client = await clients.saveSelfRegistered({
        id: newId(),
        name,
        redirectUris,
        scopes: scope.scopes,
        registration: 'dynamic',
        metadataExpiresAt: null,
      });
      logger.info('oauth client registered', { clientId: client.id, registration: 'dynamic' });
      return {
        client_id: client.id,
        client_id_issued_at: Math.floor(new Date(client.createdAt).getTime() / 1000),
        application_type: applicationTypeOf(doc) === 'native' ? 'native' : 'web',
        client_name: client.name,
        redirect_uris: client.redirectUris,
        grant_types: [...SELF_REGISTERED_GRANT_TYPES],
        response_types: [...SELF_REGISTERED_RESPONSE_TYPES],
        token_endpoint_auth_method: 'none',
        scope: formatScope(client.scopes),
      };
    },
  };
}
