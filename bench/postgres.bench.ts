// PostgreSQL beside SQLite in one run (docs/postgres.md, Benchmarks): the refresh_token grant
// and an authenticated GET (/oauth/userinfo, bearer JWT) on each engine, oidc-provider's
// in-memory figures as the reference in the same run (bench/oidc-reference.ts), then one node
// against two nodes on one PostgreSQL database with the load split across both (the tests'
// cluster helper, test/helpers/cluster.ts). A throwaway PostgreSQL server
// (test/helpers/postgres-server.mjs) with its durability settings on, loopback only. Client pinned to CPU 0;
// every server process (Gantry nodes, PostgreSQL, oidc-provider) to CPU 1 where taskset exists,
// so each engine gets the same single core. Only 2xx responses count; each row also gives the CPU
// time per 2xx of the answering processes and of PostgreSQL's. Bounded: about 3 minutes.
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
import { startPostgres } from '../test/helpers/postgres-server.mjs';
import { startCluster } from '../test/helpers/cluster.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { warmup: WARMUP_SEC, duration: DURATION_SEC } = benchSeconds({ warmup: 2, duration: 5 });
const CONNECTIONS = 20;
/**
 * Authorizations minted per engine, each the seed of a refresh chain (bench/lib.ts,
 * RefreshChains): every run drops the chains it leaves in flight, about 20.
 */
const CHAINS = Number(process.env.BENCH_CHAINS ?? 160);
/**
 * Whose authorizations the refresh chains are: 50 users by default. One user may refresh
 * 120 times a minute (docs/oauth.md, Rate limits); the bench lifts that limit, and with one
 * user's tokens every refresh would queue on that user's meter row (docs/postgres.md,
 * Transactions), a load no client can send. BENCH_USERS=1 measures that case.
 */
const USERS = Number(process.env.BENCH_USERS ?? 50);

/** The server processes of a row, by group, whose CPU time is measured (each with its children). */
type ServerProcesses = Record<string, number[]>;

/**
 * Warm-up, then the measured run; several option sets run at once (one per node) and add up.
 * The servers' CPU time over the measured run, per 2xx answer, says where a refresh's cost is
 * (the node, the database) whatever else the shared machine runs meanwhile.
 */
async function measure(split: autocannon.Options[], servers: ServerProcesses): Promise<LoadFigures> {
  const connections = CONNECTIONS / split.length;
  await Promise.all(split.map((o) => autocannon({ ...o, connections, duration: WARMUP_SEC })));
  const cpuBefore = Object.values(servers).map(processTreeCpuMs);
  const runs = await Promise.all(split.map((o) => autocannon({ ...o, connections, duration: DURATION_SEC })));
  const ok = runs.reduce((n, r) => n + r['2xx'], 0);
  const cpuUs = Object.fromEntries(
    Object.entries(servers).map(([group, pids], i) => [
      group,
      ok > 0 ? Math.round(((processTreeCpuMs(pids) - cpuBefore[i]) * 1000) / ok) : 0,
    ]),
  );
  return {
    rps: ok / DURATION_SEC,
    p50: Math.max(...runs.map((r) => r.latency.p50)),
    p99: Math.max(...runs.map((r) => r.latency.p99)),
    non2xx: runs.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0),
    cpuUs,
  };
}

async function main() {
  if (!existsSync(path.join(ROOT, 'dist'))) execSync('node build.mjs', { cwd: ROOT, stdio: 'inherit' });
  if (HAS_TASKSET) execSync(`taskset -a -cp 0 ${process.pid}`, { stdio: 'ignore' });
  const home = mkdtempSync(path.join(tmpdir(), 'gantry-bench-pg-'));
  // Durable, as a deployment runs it: fsync and synchronous commits on (the tests turn them off).
  const server = await startPostgres({ durable: true });
  let cluster: Awaited<ReturnType<typeof startCluster>> | null = null;
  const children: Array<{ stop(): Promise<void> }> = [];
  try {
    // Backends fork from the postmaster and inherit its core.
    if (HAS_TASKSET) execSync(`taskset -a -cp 1 ${server.pid}`, { stdio: 'ignore' });
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
    if (HAS_TASKSET)
      for (const node of cluster.nodes) execSync(`taskset -a -cp 1 ${node.proc.pid}`, { stdio: 'ignore' });
    const pgEnv = { ...common, ...cluster.env, GANTRY_DATA_DIR: path.join(home, 'pg-mint') };
    let t = Date.now();
    const sqlite = await mintRefreshChains(sqliteEnv, CHAINS, USERS);
    console.log(`minted ${CHAINS} authorizations on SQLite in ${Date.now() - t} ms`);
    t = Date.now();
    // Two sets on PostgreSQL: node A's single-node run and the two-node run.
    const postgres = await mintRefreshChains(pgEnv, CHAINS * 2, USERS);
    console.log(`minted ${CHAINS * 2} authorizations on PostgreSQL in ${Date.now() - t} ms`);
    const sqliteNode = await startOnServerCore(
      [path.join(ROOT, 'bin/gantry'), 'serve'],
      /gantry listening on/,
      'gantry',
      sqliteEnv,
    );
    children.push(sqliteNode);
    const oidcPort = await freePort();
    const poolFile = path.join(home, 'oidc-pool.json');
    const oidc = await startOnServerCore(
      ['--import', 'tsx', path.join(ROOT, 'bench/oidc-reference.ts'), String(oidcPort), poolFile, String(CHAINS)],
      /ready/,
      'oidc-provider',
    );
    children.push(oidc);
    const ref = JSON.parse(readFileSync(poolFile, 'utf8')) as { seeds: string[]; accessToken: string };
    const refAuth = `Basic ${Buffer.from('bench-client:bench-secret-that-is-long-enough-for-hs256-0001').toString('base64')}`;

    const sqliteBase = sqliteEnv.GANTRY_PUBLIC_URL;
    const [nodeA, nodeB] = cluster.nodes.map((node) => node.url);
    const oidcBase = `http://127.0.0.1:${oidcPort}`;
    const userinfo = (base: string, token: string) => ({
      url: `${base}/api/v1/oauth/userinfo`,
      headers: { authorization: `Bearer ${token}` },
    });
    const pgSeeds = { single: postgres.seeds.slice(0, CHAINS), split: postgres.seeds.slice(CHAINS) };
    const half = CHAINS / 2;
    const chains = (url: string, authorization: string, seeds: string[]) =>
      new RefreshChains(`${url}/token`, authorization, seeds).options();
    // Whose CPU each row measures: the server answering, and for PostgreSQL the database too.
    const [pidA, pidB] = cluster.nodes.map((node) => node.proc.pid!);
    const reference: ServerProcesses = { server: [oidc.proc.pid!] };
    const onSqlite: ServerProcesses = { server: [sqliteNode.proc.pid!] };
    const onPostgres = (pids: number[]): ServerProcesses => ({ server: pids, postgres: [server.pid!] });
    const rows: Array<[string, autocannon.Options[], ServerProcesses]> = [
      ['oidc-provider refresh (in memory)', [chains(oidcBase, refAuth, ref.seeds)], reference],
      ['SQLite refresh', [chains(`${sqliteBase}/api/v1/oauth`, sqlite.authorization, sqlite.seeds)], onSqlite],
      [
        'PostgreSQL refresh, 1 node',
        [chains(`${nodeA}/api/v1/oauth`, postgres.authorization, pgSeeds.single)],
        onPostgres([pidA]),
      ],
      [
        'PostgreSQL refresh, 2 nodes',
        [
          chains(`${nodeA}/api/v1/oauth`, postgres.authorization, pgSeeds.split.slice(0, half)),
          chains(`${nodeB}/api/v1/oauth`, postgres.authorization, pgSeeds.split.slice(half)),
        ],
        onPostgres([pidA, pidB]),
      ],
      [
        'oidc-provider GET /me (in memory)',
        [{ url: `${oidcBase}/me`, headers: { authorization: `Bearer ${ref.accessToken}` } }],
        reference,
      ],
      ['SQLite GET /oauth/userinfo', [userinfo(sqliteBase, sqlite.accessToken)], onSqlite],
      ['PostgreSQL GET /oauth/userinfo, 1 node', [userinfo(nodeA, postgres.accessToken)], onPostgres([pidA])],
      [
        'PostgreSQL GET /oauth/userinfo, 2 nodes',
        [userinfo(nodeA, postgres.accessToken), userinfo(nodeB, postgres.accessToken)],
        onPostgres([pidA, pidB]),
      ],
    ];
    const results = new Map<string, LoadFigures>();
    for (const [name, split, servers] of rows) results.set(name, await measure(split, servers));

    console.log(
      `\nPostgreSQL beside SQLite: ${CONNECTIONS} connections in all, ${WARMUP_SEC} s warm-up + ${DURATION_SEC} s measured, refresh tokens of ${USERS} users, pinned=${HAS_TASKSET}`,
    );
    console.log(
      `${'target'.padEnd(40)} ${'2xx/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'non-2xx'.padStart(8)} ${'server µs'.padStart(10)} ${'postgres µs'.padStart(12)}`,
    );
    for (const [name, f] of results)
      console.log(
        `${name.padEnd(40)} ${f.rps.toFixed(0).padStart(8)} ${String(f.p50).padStart(7)} ${String(f.p99).padStart(7)} ${String(f.non2xx).padStart(8)} ${String(f.cpuUs?.server ?? '').padStart(10)} ${String(f.cpuUs?.postgres ?? '').padStart(12)}`,
      );
    console.log('(server µs, postgres µs: CPU time per 2xx answer of the answering processes and of the database)');
    const ratio = (a: string, b: string) => (results.get(a)!.rps / results.get(b)!.rps).toFixed(2);
    console.log(
      `refresh  PostgreSQL/oidc-provider: ${ratio('PostgreSQL refresh, 1 node', 'oidc-provider refresh (in memory)')}x; SQLite/oidc-provider: ${ratio('SQLite refresh', 'oidc-provider refresh (in memory)')}x; PostgreSQL/SQLite: ${ratio('PostgreSQL refresh, 1 node', 'SQLite refresh')}x`,
    );
    console.log(
      `userinfo PostgreSQL/oidc-provider: ${ratio('PostgreSQL GET /oauth/userinfo, 1 node', 'oidc-provider GET /me (in memory)')}x; PostgreSQL/SQLite: ${ratio('PostgreSQL GET /oauth/userinfo, 1 node', 'SQLite GET /oauth/userinfo')}x`,
    );
    console.log(
      `two nodes / one node on PostgreSQL: refresh ${ratio('PostgreSQL refresh, 2 nodes', 'PostgreSQL refresh, 1 node')}x, userinfo ${ratio('PostgreSQL GET /oauth/userinfo, 2 nodes', 'PostgreSQL GET /oauth/userinfo, 1 node')}x` +
        (HAS_TASKSET
          ? ' (both nodes and PostgreSQL share CPU 1: this is what a second node costs or gains on one core, not growth with cores)'
          : ''),
    );
  } finally {
    for (const child of children) await child.stop();
    await cluster?.stop();
    await new Promise((r) => setTimeout(r, 500));
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
