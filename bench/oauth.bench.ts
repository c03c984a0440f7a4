// OAuth benchmark (PERFORMANCE.md): the refresh_token grant (rotation, family tracking) and
// GET /oauth/userinfo against the built binary, beside oidc-provider 9 configured the same way
// (bench/oidc-reference.ts), in the same run. Client pinned to CPU 0, servers to CPU 1 where
// taskset exists. Each refresh request takes a fresh token from a pre-minted pool (minted
// through the service in this process against the same data dir, before the server starts).
// Only 2xx responses count as throughput. Bounded: about 80 s in all.
import { execSync, spawn, type ChildProcess } from 'node:child_process';
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

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WARMUP_SEC = Number(process.env.BENCH_WARMUP_SEC ?? 2);
const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 5);
/** Rounds alternate the targets, so a noisy moment on the machine hits both. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 20;
const POOL = Number(process.env.BENCH_POOL ?? 90_000);
const hasTaskset = (() => {
  try {
    execSync('command -v taskset', { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

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
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start`)), 60_000);
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr!.resume();
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out}`)));
  });
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function measure(opts: autocannon.Options): Promise<Figures> {
  await autocannon({ ...opts, connections: CONNECTIONS, duration: WARMUP_SEC });
  const r = await autocannon({ ...opts, connections: CONNECTIONS, duration: DURATION_SEC });
  return {
    rps: r['2xx'] / DURATION_SEC,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx + r.errors + r.timeouts,
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

async function main() {
  if (!existsSync(path.join(ROOT, 'dist'))) execSync('node build.mjs', { cwd: ROOT, stdio: 'inherit' });
  if (hasTaskset) execSync(`taskset -a -cp 0 ${process.pid}`, { stdio: 'ignore' });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-bench-oauth-'));
  const children: ChildProcess[] = [];
  try {
    const port = await freePort();
    const env = {
      GANTRY_DATA_DIR: dataDir,
      GANTRY_PORT: String(port),
      GANTRY_PUBLIC_URL: `http://127.0.0.1:${port}`,
      GANTRY_LOG_LEVEL: 'warn',
      GANTRY_RATE_LIMIT_MULTIPLIER: '100000',
      GANTRY_SCRYPT_COST: '1024',
    };

    // Mint the pool through the service, then close: the server owns the file from here on.
    const app = await createAppContext(resolveConfig({}, env), { logger: createLogger('warn'), env });
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
      const { createHash, randomBytes } = await import('node:crypto');
      const verifier = randomBytes(32).toString('base64url');
      const redirect = await app.services.oauth.authorize.approve(user.id, {
        clientId: client.clientId,
        redirectUri: 'https://app.example/cb',
        scopes: ['email:read', 'profile:read'],
        state: null,
        codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
        resource: 'api',
      });
      const code = new URL(redirect).searchParams.get('code')!;
      const issued = await app.services.oauth.token(
        {
          authorization,
          body: {
            grant_type: 'authorization_code',
            code,
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
    while (pool.length < POOL) {
      await inTransaction(app.kernel.db, async (trx) => {
        for (let i = 0; i < 5000 && pool.length < POOL; i++)
          pool.push(
            (await app.services.oauth.tokens.issue(trx, grants[pool.length % grants.length], 'email:read profile:read'))
              .refresh_token,
          );
      });
    }
    await app.kernel.close();

    const gantry = await start([path.join(ROOT, 'bin/gantry'), 'serve'], env, /gantry listening on/);
    children.push(gantry);
    const oidcPort = await freePort();
    const poolFile = path.join(dataDir, 'oidc-pool.json');
    const oidc = await start(
      [
        '--import',
        'tsx',
        path.join(ROOT, 'bench/oidc-reference.ts'),
        String(oidcPort),
        poolFile,
        String(Math.round(POOL / 2)),
      ],
      {},
      /ready/,
    );
    children.push(oidc);
    const ref = JSON.parse(readFileSync(poolFile, 'utf8')) as { refreshTokens: string[]; accessToken: string };
    const refAuth = `Basic ${Buffer.from('bench-client:bench-secret-that-is-long-enough-for-hs256-0001').toString('base64')}`;

    const base = `http://127.0.0.1:${port}`;
    const oidcBase = `http://127.0.0.1:${oidcPort}`;
    const targets: Array<[string, () => autocannon.Options]> = [
      ['gantry refresh_token grant', () => refreshRequests(`${base}/api/v1/oauth/token`, authorization, pool)],
      ['oidc-provider refresh_token grant', () => refreshRequests(`${oidcBase}/token`, refAuth, ref.refreshTokens)],
      [
        'gantry GET /oauth/userinfo',
        () => ({ url: `${base}/api/v1/oauth/userinfo`, headers: { authorization: `Bearer ${accessToken}` } }),
      ],
      [
        'oidc-provider GET /me (userinfo)',
        () => ({ url: `${oidcBase}/me`, headers: { authorization: `Bearer ${ref.accessToken}` } }),
      ],
    ];
    // One options object per target for the whole run, so the refresh pools keep moving forward.
    const options = targets.map(([, make]) => make());
    const results: Figures[][] = targets.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < targets.length; i++) results[i].push(await measure(options[i]));
    }

    console.log(
      `\nOAuth bench: ${CONNECTIONS} connections, ${WARMUP_SEC} s warm-up + ${DURATION_SEC} s measured per run, ${ROUNDS} rounds, pinned=${hasTaskset}`,
    );
    console.log(
      'target                              2xx/s      p50 ms  p99 ms  non-2xx   (mean of rounds; p99 the worst round)',
    );
    const summary = results.map((runs) => ({
      rps: runs.reduce((a, r) => a + r.rps, 0) / runs.length,
      p50: Math.max(...runs.map((r) => r.p50)),
      p99: Math.max(...runs.map((r) => r.p99)),
      non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    }));
    targets.forEach(([name], i) => {
      const f = summary[i];
      console.log(
        `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(8)}  ${String(f.p50).padStart(6)}  ${String(f.p99).padStart(6)}  ${String(f.non2xx).padStart(7)}   rounds: ${results[i].map((r) => r.rps.toFixed(0)).join(', ')}`,
      );
    });
    console.log(`ratio refresh  gantry/oidc-provider: ${(summary[0].rps / summary[1].rps).toFixed(2)}x`);
    console.log(`ratio userinfo gantry/oidc-provider: ${(summary[2].rps / summary[3].rps).toFixed(2)}x`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
