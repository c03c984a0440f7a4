// The reference for bench/oauth.bench.ts: oidc-provider 9 configured like Gantry (refresh
// rotation on every use, HS256 JWT access tokens for the API resource, client_secret_basic),
// its own in-memory adapter with room for the whole token pool (the default keeps 1000
// entries, which would evict the pool). Pre-mints the same number of refresh tokens through
// its models, writes them to a file, and prints "ready" when listening.
import { createSecretKey } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
// @ts-expect-error oidc-provider ships no type declarations
import Provider from 'oidc-provider';

const [port, poolFile, poolSizeText] = process.argv.slice(2);
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

const grants: string[] = [];
for (let i = 0; i < 50; i++) {
  const grant = new Grant({ accountId, clientId });
  grant.addOIDCScope('openid email profile offline_access');
  grant.addResourceScope(resource, 'api:read');
  grants.push(await grant.save());
}
const pool: string[] = [];
const poolSize = Number(poolSizeText);
for (let i = 0; i < poolSize; i++) {
  const rt = new RefreshToken({
    accountId,
    clientId,
    grantId: grants[i % grants.length],
    scope: 'openid email profile offline_access api:read',
    resource,
    gty: 'authorization_code',
    iiat: now(),
    rotations: 0,
  });
  pool.push(await rt.save());
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
writeFileSync(poolFile, JSON.stringify({ refreshTokens: pool, accessToken }));

provider.listen(Number(port), '127.0.0.1', () => console.log('ready'));
