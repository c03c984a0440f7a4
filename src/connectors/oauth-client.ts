import type { Kernel } from '../kernel.js';
import { DomainError, conflict } from '../http/errors.js';
import { apiUrl } from '../http/paths.js';
import { guardedFetch, readLimited } from '../lib/outbound.js';
import type { Definition } from './types.js';

/** A token endpoint's answer (RFC 6749 §5.1), for a code exchange (§4.1.3) or a refresh (§6). */
export interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
}

/** A linking or refresh failure with the reason shown to the user (and logged). */
export class OauthFailure extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** The redirect_uri of a connector (the callback route of the connectors plugin). */
export const callbackUrl = (publicUrl: string, key: string) =>
  apiUrl(publicUrl, `/connectors/oauth/${encodeURIComponent(key)}/callback`);

/** The OAuth client of a definition, or why it cannot link (not OAuth: 409; no client configured: 503). */
export function ready(def: Definition) {
  const o = def.oauth;
  if (def.authKind !== 'oauth2' || !o) throw conflict(`${def.key} is not an OAuth connector`);
  if (!o.clientId || !o.authorizeUrl || !o.tokenUrl)
    throw new DomainError('NOT_CONFIGURED', `The ${def.key} connector has no OAuth client configured`);
  return o as Required<NonNullable<Definition['oauth']>> & { clientId: string; authorizeUrl: string; tokenUrl: string };
}

/** The HTTP client of the providers' token endpoints (SSRF-guarded, bounded answers). */
export function createTokenClient(kernel: Kernel) {
  const fetchOut = () => guardedFetch({ allowPrivate: kernel.config.allowPrivateNetworks });

  return {
    /** POSTs a token request (client_secret_post) and parses the answer, bounded in time and size. */
    async request(def: Definition, params: Record<string, string>): Promise<TokenAnswer> {
      const o = ready(def);
      const body = new URLSearchParams({
        ...params,
        client_id: o.clientId,
        ...(o.clientSecret ? { client_secret: o.clientSecret } : {}),
      });
      let res: Response;
      try {
        res = await fetchOut()(o.tokenUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body,
        });
      } catch (err) {
        throw new OauthFailure('provider_unreachable', `token endpoint unreachable: ${(err as Error).message}`);
      }
      const text = await readLimited(res, 256 * 1024).catch(() => '');
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        json = Object.fromEntries(new URLSearchParams(text));
      }
      if (!res.ok || typeof json.access_token !== 'string') {
        const code = typeof json.error === 'string' ? json.error : `http_${res.status}`;
        throw new OauthFailure(
          code === 'invalid_grant' ? 'invalid_grant' : 'token_exchange_failed',
          `token endpoint refused: ${code}`,
        );
      }
      return {
        access_token: json.access_token,
        refresh_token: typeof json.refresh_token === 'string' ? json.refresh_token : undefined,
        expires_in: json.expires_in !== undefined ? Number(json.expires_in) : undefined,
        scope: typeof json.scope === 'string' ? json.scope : undefined,
      };
    },
  };
}
