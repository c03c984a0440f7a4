// The reference for the refresh grant and userinfo (bench/oauth.bench.ts, bench/postgres.bench.ts):
// oidc-provider 9 doing the work Gantry does: refresh rotation on every use, an HS256 JWT access
// token for the API resource, client_secret_basic, and no ID token (Gantry issues none: a
// refresh token without the `openid` scope gets no RS256 ID token from oidc-provider either).
// Its own in-memory adapter with room for every token (the default keeps 1000 entries).
// Mints one refresh token in each of `chains` authorizations (the seeds of the bench's refresh
// chains, bench/lib.ts RefreshChains), writes them to a file, and prints "ready" when listening.
import { createSecretKey } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
// @ts-expect-error oidc-provider ships no type declarations
import Provider from 'oidc-provider';

const [port, poolFile, chainsText] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const resource = `${issuer}/api`;
const require = createRequire(import.meta.url);
const root = path.dirname(require.resolve('oidc-provider/package.json'));
const { default: MemoryAdapter } = (await import(
  pathToFileURL(path.join(root, 'lib/adapters/memory_adapter.js')).href
)) as { default: new (model: string, store: unknown, tolerance: number) => unknown };
const { default: LRU } = (await import(pathToFileURL(path.join(root, 'lib/helpers/lru.js')).href)) as {
  default: new (o: { maxSize: number }) => unknown;
};
const store = new LRU({ maxSize: 2_000_000 });

const hsKey = createSecretKey(Buffer.alloc(32, 7));
const provider = new Provider(issuer, {
  adapter: (model: string) => new MemoryAdapter(model, store, 0),
  clients: [
    {
      client_id: 'bench-client',
      client_secret: 'bench-secret-that-is-long-enough-for-hs256-0001',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['https://app.example/cb'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  findAccount: async (_ctx: unknown, id: string) => ({
    accountId: id,
    claims: async () => ({ sub: id, email: 'bench@example.test', email_verified: true, name: 'Bench User' }),
  }),
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  scopes: ['openid', 'offline_access', 'email', 'profile'],
  rotateRefreshToken: true,
  features: {
    revocation: { enabled: true },
    userinfo: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'api:read',
        audience: resource,
        accessTokenTTL: 3600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'HS256', key: hsKey } },
      }),
    },
  },
  ttl: { RefreshToken: 30 * 24 * 3600, AccessToken: 3600 },
});
provider.proxy = false;

const accountId = 'bench-account';
const clientId = 'bench-client';
const now = () => Math.floor(Date.now() / 1000);
const { Grant, RefreshToken, AccessToken } = provider as unknown as Record<
  string,
  new (
    o: Record<string, unknown>,
  ) => { save(): Promise<string>; addOIDCScope(s: string): void; addResourceScope(r: string, s: string): void }
>;

const seeds: string[] = [];
for (let i = 0; i < Number(chainsText); i++) {
  // One authorization per chain, for the API resource only: no `openid`, so no ID token.
  const account = `${accountId}-${i % 50}`;
  const grant = new Grant({ accountId: account, clientId });
  grant.addResourceScope(resource, 'api:read');
  const grantId = await grant.save();
  const rt = new RefreshToken({
    accountId: account,
    clientId,
    grantId,
    scope: 'api:read',
    resource,
    gty: 'authorization_code',
    iiat: now(),
    rotations: 0,
  });
  seeds.push(await rt.save());
}
// Userinfo takes the opaque, resource-less token oidc-provider issues for it.
const userinfoGrant = new Grant({ accountId, clientId });
userinfoGrant.addOIDCScope('openid email profile');
const userinfoGrantId = await userinfoGrant.save();
const accessToken = await new AccessToken({
  accountId,
  clientId,
  grantId: userinfoGrantId,
  scope: 'openid email profile',
  gty: 'authorization_code',
}).save();
writeFileSync(poolFile, JSON.stringify({ seeds, accessToken }));

provider.listen(Number(port), '127.0.0.1', () => console.log('ready'));
