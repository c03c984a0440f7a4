// OAuth benchmark (PERFORMANCE.md): the refresh_token grant (rotation, family tracking) and
// GET /oauth/userinfo against the built binary, beside oidc-provider 9 configured the same way
// (bench/oidc-reference.ts), in the same run. Client pinned to CPU 0, servers to CPU 1 where
// taskset exists. Each refresh request takes a fresh token from a pre-minted pool (minted
// through the service in this process against the same data dir, before the server starts).
// Only 2xx responses count as throughput. Bounded: about 80 s in all.
import { execSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import {
  benchSeconds,
  freePort,
  HAS_TASKSET,
  type LoadFigures,
  mintRefreshTokens,
  refreshRequests,
  startOnServerCore,
} from './lib.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { warmup: WARMUP_SEC, duration: DURATION_SEC } = benchSeconds({ warmup: 2, duration: 5 });
/** Rounds alternate the targets, so a noisy moment on the machine hits both. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 20;
const POOL = Number(process.env.BENCH_POOL ?? 90_000);

async function measure(opts: autocannon.Options): Promise<LoadFigures> {
  await autocannon({ ...opts, connections: CONNECTIONS, duration: WARMUP_SEC });
  const r = await autocannon({ ...opts, connections: CONNECTIONS, duration: DURATION_SEC });
  return {
    rps: r['2xx'] / DURATION_SEC,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx + r.errors + r.timeouts,
  };
}

async function main() {
  if (!existsSync(path.join(ROOT, 'dist'))) execSync('node build.mjs', { cwd: ROOT, stdio: 'inherit' });
  if (HAS_TASKSET) execSync(`taskset -a -cp 0 ${process.pid}`, { stdio: 'ignore' });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-bench-oauth-'));
  const children: Array<{ stop(): Promise<void> }> = [];
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

    // Mint the pool through the services, then close: the server owns the file from here on.
    const { authorization, accessToken, pool } = await mintRefreshTokens(env, POOL);

    const gantry = await startOnServerCore(
      [path.join(ROOT, 'bin/gantry'), 'serve'],
      /gantry listening on/,
      'gantry',
      env,
    );
    children.push(gantry);
    const oidcPort = await freePort();
    const poolFile = path.join(dataDir, 'oidc-pool.json');
    const oidc = await startOnServerCore(
      [
        '--import',
        'tsx',
        path.join(ROOT, 'bench/oidc-reference.ts'),
        String(oidcPort),
        poolFile,
        String(Math.round(POOL / 2)),
      ],
      /ready/,
      'oidc-provider',
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
    const results: LoadFigures[][] = targets.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < targets.length; i++) results[i].push(await measure(options[i]));
    }

    console.log(
      `\nOAuth bench: ${CONNECTIONS} connections, ${WARMUP_SEC} s warm-up + ${DURATION_SEC} s measured per run, ${ROUNDS} rounds, pinned=${HAS_TASKSET}`,
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
    for (const child of children) await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
