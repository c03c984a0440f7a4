// OAuth benchmark (PERFORMANCE.md): the refresh_token grant (rotation, family tracking) and
// GET /oauth/userinfo against the built binary, beside oidc-provider 9 doing the same work
// (bench/oidc-reference.ts: rotation, an HS256 JWT access token, no ID token), in the same run.
// Refreshes go as clients send them: 20 chains, each spending its latest refresh token and
// going on with the one its answer carries (bench/lib.ts, RefreshChains). Client pinned to CPU
// 0, servers to CPU 1 where taskset exists. Rounds alternate the targets, so a noisy moment on
// the shared machine hits both; each round's ratio compares figures taken seconds apart, and the
// spread of those ratios is printed with their median. Only 2xx responses count as throughput;
// the servers' CPU time per 2xx is printed too (steadier than throughput on a shared machine).
// Bounded: about 90 s with the defaults.
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
  mintRefreshChains,
  processTreeCpuMs,
  RefreshChains,
  startOnServerCore,
} from './lib.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { warmup: WARMUP_SEC, duration: DURATION_SEC } = benchSeconds({ warmup: 2, duration: 5 });
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 20;
/** Authorizations minted per server: each run drops the chains it leaves in flight (about 20). */
const CHAINS = Number(process.env.BENCH_CHAINS ?? 60 * ROUNDS + 40);

type Target = [name: string, options: () => autocannon.Options, pid: number];

async function measure(options: autocannon.Options, pid: number): Promise<LoadFigures> {
  await autocannon({ ...options, connections: CONNECTIONS, duration: WARMUP_SEC });
  const cpuBefore = processTreeCpuMs([pid]);
  const clientBefore = process.cpuUsage();
  const r = await autocannon({ ...options, connections: CONNECTIONS, duration: DURATION_SEC });
  const client = process.cpuUsage(clientBefore);
  const ok = r['2xx'];
  return {
    rps: ok / DURATION_SEC,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx + r.errors + r.timeouts,
    cpuUs: {
      server: ok > 0 ? Math.round(((processTreeCpuMs([pid]) - cpuBefore) * 1000) / ok) : 0,
      // The load generator's share of its core: near 100, it and not the server sets the pace.
      clientPct: Math.round((client.user + client.system) / (DURATION_SEC * 1e4)),
    },
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Each round's ratio of two targets' throughput: median and spread (min-max). */
function ratios(results: LoadFigures[][], a: number, b: number): string {
  const each = results[a].map((r, i) => r.rps / results[b][i].rps);
  const cpu = results[a].map((r, i) => results[b][i].cpuUs!.server / r.cpuUs!.server);
  const f = (x: number) => x.toFixed(2);
  return `${f(median(each))}x (rounds ${each.map(f).join(', ')}; by CPU per 2xx ${f(median(cpu))}x)`;
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

    // Mint the chains through the services, then close: the server owns the file from here on.
    const { authorization, accessToken, seeds } = await mintRefreshChains(env, CHAINS);

    const gantry = await startOnServerCore(
      [...(process.env.BENCH_NODE_ARGS?.split(' ') ?? []), path.join(ROOT, 'bin/gantry'), 'serve'],
      /gantry listening on/,
      'gantry',
      env,
    );
    children.push(gantry);
    const oidcPort = await freePort();
    const poolFile = path.join(dataDir, 'oidc-pool.json');
    const oidc = await startOnServerCore(
      ['--import', 'tsx', path.join(ROOT, 'bench/oidc-reference.ts'), String(oidcPort), poolFile, String(CHAINS)],
      /ready/,
      'oidc-provider',
    );
    children.push(oidc);
    const ref = JSON.parse(readFileSync(poolFile, 'utf8')) as { seeds: string[]; accessToken: string };
    const refAuth = `Basic ${Buffer.from('bench-client:bench-secret-that-is-long-enough-for-hs256-0001').toString('base64')}`;

    const base = `http://127.0.0.1:${port}`;
    const oidcBase = `http://127.0.0.1:${oidcPort}`;
    const gantryChains = new RefreshChains(`${base}/api/v1/oauth/token`, authorization, seeds);
    const oidcChains = new RefreshChains(`${oidcBase}/token`, refAuth, ref.seeds);
    const gantryPid = gantry.proc.pid!;
    const oidcPid = oidc.proc.pid!;
    const targets: Target[] = [
      ['gantry refresh_token grant', () => gantryChains.options(), gantryPid],
      ['oidc-provider refresh_token grant', () => oidcChains.options(), oidcPid],
      [
        'gantry GET /oauth/userinfo',
        () => ({ url: `${base}/api/v1/oauth/userinfo`, headers: { authorization: `Bearer ${accessToken}` } }),
        gantryPid,
      ],
      [
        'oidc-provider GET /me (userinfo)',
        () => ({ url: `${oidcBase}/me`, headers: { authorization: `Bearer ${ref.accessToken}` } }),
        oidcPid,
      ],
    ];
    const results: LoadFigures[][] = targets.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < targets.length; i++) results[i].push(await measure(targets[i][1](), targets[i][2]));
    }

    console.log(
      `\nOAuth bench: ${CONNECTIONS} connections (refresh: ${CONNECTIONS} chains), ${WARMUP_SEC} s warm-up + ${DURATION_SEC} s measured per run, ${ROUNDS} rounds, pinned=${HAS_TASKSET}`,
    );
    console.log(
      'target                              2xx/s   cpu µs/2xx  p50 ms  p99 ms  non-2xx   (median of rounds; p99 the worst round)',
    );
    targets.forEach(([name], i) => {
      const runs = results[i];
      console.log(
        `${name.padEnd(34)} ${median(runs.map((r) => r.rps))
          .toFixed(0)
          .padStart(
            7,
          )}  ${String(median(runs.map((r) => r.cpuUs!.server))).padStart(11)}  ${String(median(runs.map((r) => r.p50))).padStart(6)}  ${String(Math.max(...runs.map((r) => r.p99))).padStart(6)}  ${String(runs.reduce((a, r) => a + r.non2xx, 0)).padStart(7)}   rounds: ${runs.map((r) => r.rps.toFixed(0)).join(', ')}; client CPU ${runs.map((r) => `${r.cpuUs!.clientPct}%`).join(', ')}`,
      );
    });
    console.log(`ratio refresh  gantry/oidc-provider: ${ratios(results, 0, 1)}`);
    console.log(`ratio userinfo gantry/oidc-provider: ${ratios(results, 2, 3)}`);
    console.log(
      `refresh chains started: gantry ${gantryChains.started}, oidc-provider ${oidcChains.started}; answers other than 200: ${gantryChains.failed}, ${oidcChains.failed}`,
    );
  } finally {
    for (const child of children) await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
