// PostgreSQL beside SQLite in one run (docs/postgres.md, Benchmarks): the refresh_token grant
// and an authenticated GET (/oauth/userinfo, bearer JWT) on each engine, oidc-provider's
// in-memory figures as the reference in the same run (bench/oidc-reference.ts), then one node
// against two nodes on one PostgreSQL database with the load split across both (the tests'
// cluster helper, test/helpers/cluster.ts). A throwaway PostgreSQL server
// (test/helpers/postgres-server.mjs) with its durability settings on, loopback only. Client pinned to CPU 0;
// every server process (Gantry nodes, PostgreSQL, oidc-provider) to CPU 1 where taskset exists,
// so each engine gets the same single core. Only 2xx responses count. Bounded: about 3 minutes.
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { resolveConfig } from '../src/config.js';
import { createAppContext } from '../src/app.js';
import { inTransaction } from '../src/db/tx.js';
import { createLogger } from '../src/lib/logger.js';
import { startPostgres } from '../test/helpers/postgres-server.mjs';
import { startCluster } from '../test/helpers/cluster.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WARMUP_SEC = Number(process.env.BENCH_WARMUP_SEC ?? 2);
const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 5);
const CONNECTIONS = 20;
/** Refresh tokens minted per engine: more than one measured run spends, so none is reused. */
const POOL = {
  sqlite: Number(process.env.BENCH_POOL_SQLITE ?? 60_000),
  postgres: Number(process.env.BENCH_POOL_PG ?? 20_000),
};
const hasTaskset = (() => {
  try {
    execSync('command -v taskset', { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const children: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function start(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<ChildProcess> {
  const cmd = hasTaskset ? 'taskset' : process.execPath;
  const full = hasTaskset ? ['-c', '1', process.execPath, ...args] : args;
  const child = spawn(cmd, full, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start`)), 60_000);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr!.on('data', (d) => (err += d));
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${err}`)));
  });
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/** Warm-up, then the measured run; several option sets run at once (one per node) and add up. */
async function measure(split: autocannon.Options[]): Promise<Figures> {
  const connections = CONNECTIONS / split.length;
  await Promise.all(split.map((o) => autocannon({ ...o, connections, duration: WARMUP_SEC })));
  const runs = await Promise.all(split.map((o) => autocannon({ ...o, connections, duration: DURATION_SEC })));
  return {
    rps: runs.reduce((n, r) => n + r['2xx'], 0) / DURATION_SEC,
    p50: Math.max(...runs.map((r) => r.latency.p50)),
    p99: Math.max(...runs.map((r) => r.latency.p99)),
    non2xx: runs.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0),
  };
}

function refreshRequests(url: string, authorization: string, pool: string[]): autocannon.Options {
  let next = 0;
  return {
    url,
    requests: [
      {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest: (req) => ({
          ...req,
          body: `grant_type=refresh_token&refresh_token=${pool[next++ % pool.length]}`,
        }),
      },
    ],
  };
}

/** A client, a user, 50 grants, `size` refresh tokens and one access token, minted through the services. */
async function mint(env: NodeJS.ProcessEnv, size: number) {
  const app = await createAppContext(resolveConfig({}, env), { logger: createLogger('warn'), env });
  try {
    const user = await app.services.identity.createUser({
      email: 'bench@example.test',
      password: 'bench password',
      fullName: 'Bench User',
      verified: true,
    });
    const client = await app.services.oauth.clients.create({
      name: 'Bench',
      type: 'confidential',
      redirectUris: ['https://app.example/cb'],
      scopes: ['email:read', 'profile:read'],
    });
    const authorization = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
    const grants: Array<{ id: string; clientId: string; userId: string; resource: 'api'; workspaceId: null }> = [];
    let accessToken = '';
    for (let i = 0; i < 50; i++) {
      const verifier = randomBytes(32).toString('base64url');
      const redirect = await app.services.oauth.authorize.approve(user.id, {
        clientId: client.clientId,
        redirectUri: 'https://app.example/cb',
        scopes: ['email:read', 'profile:read'],
        state: null,
        codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
        resource: 'api',
      });
      const issued = await app.services.oauth.token(
        {
          authorization,
          body: {
            grant_type: 'authorization_code',
            code: new URL(redirect).searchParams.get('code')!,
            redirect_uri: 'https://app.example/cb',
            code_verifier: verifier,
          },
        },
        { address: '127.0.0.1' },
      );
      accessToken = issued.access_token;
      const row = await app.kernel.db
        .selectFrom('oauth_refresh_tokens')
        .select('grant_id')
        .orderBy('created_at', 'desc')
        .executeTakeFirstOrThrow();
      grants.push({ id: row.grant_id, clientId: client.clientId, userId: user.id, resource: 'api', workspaceId: null });
    }
    const pool: string[] = [];
    while (pool.length < size) {
      await inTransaction(app.kernel.db, async (trx) => {
        for (let i = 0; i < 2000 && pool.length < size; i++)
          pool.push(
            (await app.services.oauth.tokens.issue(trx, grants[pool.length % grants.length], 'email:read profile:read'))
              .refresh_token,
          );
      });
    }
    return { authorization, accessToken, pool };
  } finally {
    await app.kernel.close();
  }
}

async function main() {
  if (!existsSync(path.join(ROOT, 'dist'))) execSync('node build.mjs', { cwd: ROOT, stdio: 'inherit' });
  if (hasTaskset) execSync(`taskset -a -cp 0 ${process.pid}`, { stdio: 'ignore' });
  const home = mkdtempSync(path.join(tmpdir(), 'gantry-bench-pg-'));
  // Durable, as a deployment runs it: fsync and synchronous commits on (the tests turn them off).
  const server = await startPostgres({ durable: true });
  let cluster: Awaited<ReturnType<typeof startCluster>> | null = null;
  try {
    // Backends fork from the postmaster and inherit its core.
    if (hasTaskset) execSync(`taskset -a -cp 1 ${server.pid}`, { stdio: 'ignore' });
    process.env.GANTRY_TEST_DATABASE_URL = server.url;

    const common = { GANTRY_LOG_LEVEL: 'warn', GANTRY_RATE_LIMIT_MULTIPLIER: '100000', GANTRY_SCRYPT_COST: '1024' };
    const sqlitePort = await freePort();
    const sqliteEnv = {
      ...common,
      GANTRY_PORT: String(sqlitePort),
      GANTRY_PUBLIC_URL: `http://127.0.0.1:${sqlitePort}`,
      GANTRY_DATA_DIR: path.join(home, 'sqlite'),
    };
    // Two nodes on one database with the keys an operator ships to every node and one public
    // URL (behind one load balancer): any node accepts any node's tokens.
    cluster = await startCluster(2, { ...common, GANTRY_PUBLIC_URL: 'http://127.0.0.1:8080' });
    if (hasTaskset)
      for (const node of cluster.nodes) execSync(`taskset -a -cp 1 ${node.proc.pid}`, { stdio: 'ignore' });
    const pgEnv = { ...common, ...cluster.env, GANTRY_DATA_DIR: path.join(home, 'pg-mint') };
    let t = Date.now();
    const sqlite = await mint(sqliteEnv, POOL.sqlite);
    console.log(`minted ${POOL.sqlite} refresh tokens on SQLite in ${Date.now() - t} ms`);
    t = Date.now();
    const postgres = await mint(pgEnv, POOL.postgres);
    console.log(`minted ${POOL.postgres} refresh tokens on PostgreSQL in ${Date.now() - t} ms`);
    await start([path.join(ROOT, 'bin/gantry'), 'serve'], sqliteEnv, /gantry listening on/);
    const oidcPort = await freePort();
    const poolFile = path.join(home, 'oidc-pool.json');
    await start(
      ['--import', 'tsx', path.join(ROOT, 'bench/oidc-reference.ts'), String(oidcPort), poolFile, '30000'],
      {},
      /ready/,
    );
    const ref = JSON.parse(readFileSync(poolFile, 'utf8')) as { refreshTokens: string[]; accessToken: string };
    const refAuth = `Basic ${Buffer.from('bench-client:bench-secret-that-is-long-enough-for-hs256-0001').toString('base64')}`;

    const sqliteBase = sqliteEnv.GANTRY_PUBLIC_URL;
    const [nodeA, nodeB] = cluster.nodes.map((node) => node.url);
    const oidcBase = `http://127.0.0.1:${oidcPort}`;
    const userinfo = (base: string, token: string) => ({
      url: `${base}/api/v1/oauth/userinfo`,
      headers: { authorization: `Bearer ${token}` },
    });
    // The PostgreSQL pool is split in halves: node A's single-node run and the two-node run
    // spend different tokens, so no run reuses one (a reuse revokes the family).
    const half = Math.floor(postgres.pool.length / 2);
    const pgSingle = postgres.pool.slice(0, half);
    const pgSplit = postgres.pool.slice(half);
    const quarter = Math.floor(pgSplit.length / 2);
    const rows: Array<[string, autocannon.Options[]]> = [
      ['oidc-provider refresh (in memory)', [refreshRequests(`${oidcBase}/token`, refAuth, ref.refreshTokens)]],
      ['SQLite refresh', [refreshRequests(`${sqliteBase}/api/v1/oauth/token`, sqlite.authorization, sqlite.pool)]],
      [
        'PostgreSQL refresh, 1 node',
        [refreshRequests(`${nodeA}/api/v1/oauth/token`, postgres.authorization, pgSingle)],
      ],
      [
        'PostgreSQL refresh, 2 nodes',
        [
          refreshRequests(`${nodeA}/api/v1/oauth/token`, postgres.authorization, pgSplit.slice(0, quarter)),
          refreshRequests(`${nodeB}/api/v1/oauth/token`, postgres.authorization, pgSplit.slice(quarter)),
        ],
      ],
      [
        'oidc-provider GET /me (in memory)',
        [{ url: `${oidcBase}/me`, headers: { authorization: `Bearer ${ref.accessToken}` } }],
      ],
      ['SQLite GET /oauth/userinfo', [userinfo(sqliteBase, sqlite.accessToken)]],
      ['PostgreSQL GET /oauth/userinfo, 1 node', [userinfo(nodeA, postgres.accessToken)]],
      [
        'PostgreSQL GET /oauth/userinfo, 2 nodes',
        [userinfo(nodeA, postgres.accessToken), userinfo(nodeB, postgres.accessToken)],
      ],
    ];
    const results = new Map<string, Figures>();
    for (const [name, split] of rows) results.set(name, await measure(split));

    console.log(
      `\nPostgreSQL beside SQLite: ${CONNECTIONS} connections in all, ${WARMUP_SEC} s warm-up + ${DURATION_SEC} s measured, pinned=${hasTaskset}`,
    );
    console.log(
      `${'target'.padEnd(40)} ${'2xx/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'non-2xx'.padStart(8)}`,
    );
    for (const [name, f] of results)
      console.log(
        `${name.padEnd(40)} ${f.rps.toFixed(0).padStart(8)} ${String(f.p50).padStart(7)} ${String(f.p99).padStart(7)} ${String(f.non2xx).padStart(8)}`,
      );
    const ratio = (a: string, b: string) => (results.get(a)!.rps / results.get(b)!.rps).toFixed(2);
    console.log(
      `refresh  PostgreSQL/oidc-provider: ${ratio('PostgreSQL refresh, 1 node', 'oidc-provider refresh (in memory)')}x; PostgreSQL/SQLite: ${ratio('PostgreSQL refresh, 1 node', 'SQLite refresh')}x`,
    );
    console.log(
      `userinfo PostgreSQL/oidc-provider: ${ratio('PostgreSQL GET /oauth/userinfo, 1 node', 'oidc-provider GET /me (in memory)')}x; PostgreSQL/SQLite: ${ratio('PostgreSQL GET /oauth/userinfo, 1 node', 'SQLite GET /oauth/userinfo')}x`,
    );
    console.log(
      `two nodes / one node on PostgreSQL: refresh ${ratio('PostgreSQL refresh, 2 nodes', 'PostgreSQL refresh, 1 node')}x, userinfo ${ratio('PostgreSQL GET /oauth/userinfo, 2 nodes', 'PostgreSQL GET /oauth/userinfo, 1 node')}x` +
        (hasTaskset
          ? ' (both nodes and PostgreSQL share CPU 1: this is what a second node costs or gains on one core, not growth with cores)'
          : ''),
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await cluster?.stop();
    await new Promise((r) => setTimeout(r, 500));
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
