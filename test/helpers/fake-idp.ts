import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

type Alg = 'ES256' | 'RS256';
interface SigningKey {
  kid: string;
  alg: Alg;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** Who signs in at the fake provider's authorize step, and what its ID token says of them. */
export interface FakeIdpUser {
  sub: string;
  email?: string;
  email_verified?: boolean;
  amr?: string[];
  name?: string;
}

async function newKey(alg: Alg): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `${alg.toLowerCase()}-${randomUUID().slice(0, 8)}`;
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

const body = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => resolve(data));
  });

function json(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(value));
}

/**
 * A small OpenID provider on 127.0.0.1 for the tests (docs/identity-providers.md): discovery,
 * authorize (signs in `nextUser` at once), token (code + PKCE, client_secret_basic), JWKS with
 * an RS256 and an ES256 key, key rotation, and ID-JAGs signed with its keys.
 */
export async function startFakeIdp(options: { clientId: string; clientSecret: string }) {
  const keys: Record<Alg, SigningKey> = { RS256: await newKey('RS256'), ES256: await newKey('ES256') };
  let retired: SigningKey[] = [];
  const codes = new Map<string, { nonce?: string; challenge: string; redirectUri: string; user: FakeIdpUser }>();
  let jwksFetches = 0;
  let server: Server;
  let issuer = '';

  const idp = {
    get issuer() {
      return issuer;
    },
    get jwksFetches() {
      return jwksFetches;
    },
    /** Who the next authorize request signs in. */
    nextUser: { sub: 'fake-user', email: 'someone@example.test', email_verified: true } as FakeIdpUser,
    /** The last authorize request's query (what Gantry sent). */
    lastAuthorize: null as URLSearchParams | null,

    /** Signs with the current key of `alg`; a key that is not published when `unpublished`. */
    async sign(payload: JWTPayload, opts: { alg?: Alg; typ?: string; unpublished?: boolean; key?: SigningKey } = {}) {
      const alg = opts.alg ?? 'ES256';
      const key = opts.key ?? (opts.unpublished ? await newKey(alg) : keys[alg]);
      return new SignJWT(payload)
        .setProtectedHeader({ alg, kid: key.kid, typ: opts.typ ?? 'JWT' })
        .sign(key.privateKey);
    },

    /** An ID-JAG (draft 3.1) for `sub`, good for 5 minutes, with `claims` overriding any claim. */
    idJag(
      base: { sub: string; aud: string; clientId: string; resource: string; scope?: string },
      claims: JWTPayload = {},
      opts: { alg?: Alg; typ?: string; unpublished?: boolean; key?: SigningKey } = {},
    ) {
      const now = Math.floor(Date.now() / 1000);
      return idp.sign(
        {
          iss: issuer,
          sub: base.sub,
          aud: base.aud,
          client_id: base.clientId,
          resource: base.resource,
          jti: randomUUID(),
          iat: now,
          exp: now + 300,
          ...(base.scope === undefined ? {} : { scope: base.scope }),
          ...claims,
        },
        { typ: 'oauth-id-jag+jwt', ...opts },
      );
    },

    /** Replaces the ES256 key: the old one leaves the JWKS (returned, to sign with it still). */
    async rotate(): Promise<SigningKey> {
      const old = keys.ES256;
      keys.ES256 = await newKey('ES256');
      retired = [];
      return old;
    },

    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/.well-known/openid-configuration')
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        grant_types_supported: ['authorization_code', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      });
    if (url.pathname === '/jwks') {
      jwksFetches++;
      return json(res, 200, { keys: [keys.RS256, keys.ES256, ...retired].map((k) => k.publicJwk) });
    }
    if (url.pathname === '/authorize') {
      idp.lastAuthorize = url.searchParams;
      const code = randomUUID();
      codes.set(code, {
        nonce: url.searchParams.get('nonce') ?? undefined,
        challenge: url.searchParams.get('code_challenge') ?? '',
        redirectUri: url.searchParams.get('redirect_uri') ?? '',
        user: { ...idp.nextUser },
      });
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      back.searchParams.set('iss', issuer);
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(await body(req));
      // RFC 6749 2.3.1: each part form-urlencoded before base64 (openid-client encodes even '-').
      const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      const [id, secret] = basic.split(':').map((p) => decodeURIComponent(p.replace(/\+/g, ' ')));
      if (id !== options.clientId || secret !== options.clientSecret)
        return json(res, 401, { error: 'invalid_client' });
      const entry = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (!entry || entry.challenge !== challenge || entry.redirectUri !== form.get('redirect_uri'))
        return json(res, 400, { error: 'invalid_grant' });
      const now = Math.floor(Date.now() / 1000);
      const idToken = await idp.sign(
        {
          iss: issuer,
          aud: options.clientId,
          iat: now,
          exp: now + 300,
          ...(entry.nonce ? { nonce: entry.nonce } : {}),
          ...entry.user,
        },
        { alg: 'RS256' },
      );
      return json(res, 200, { access_token: randomUUID(), token_type: 'Bearer', expires_in: 300, id_token: idToken });
    }
    json(res, 404, { error: 'not_found' });
  }

  server = createServer((req, res) => {
    handle(req, res).catch((err) => json(res, 500, { error: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return idp;
}

export type FakeIdp = Awaited<ReturnType<typeof startFakeIdp>>;
