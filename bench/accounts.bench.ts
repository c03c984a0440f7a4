// Audit log paging over 100,000 entries: the first page against the last page, by cursor
// (keyset on seq over the (account_id, seq) index). Starts the built binary on loopback,
// pins it to CPU 1 and the client to CPU 0 where taskset exists, and prints requests/s,
// p50/p99 and the ratio last/first. Run: node build.mjs && node --import tsx bench/accounts.bench.ts
import { rawSqlite } from '../test/helpers/app.js';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchSeconds, startGantry } from './lib.js';
import { resolveConfig } from '../src/config.js';
import { createAppContext } from '../src/app.js';
import { createLogger } from '../src/lib/logger.js';
import { newId } from '../src/lib/ids.js';
import { OPERATOR } from '../src/accounts/access.js';

const ENTRIES = 100_000;
const { warmup: WARMUP_SEC, duration: MEASURE_SEC } = benchSeconds({ warmup: 3, duration: 8 });
const hasTaskset = spawnSync('taskset', ['--version']).status === 0;

if (!existsSync(fileURLToPath(new URL('../dist/gantry.cjs', import.meta.url)))) {
  console.error('build first: node build.mjs');
  process.exit(1);
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-bench-accounts-'));
const env = {
  ...process.env,
  GANTRY_DATA_DIR: dataDir,
  GANTRY_LOG_LEVEL: 'warn',
  GANTRY_SCRYPT_COST: '1024',
  GANTRY_RATE_LIMIT_MULTIPLIER: '100000',
  GANTRY_PORT: '0',
  GANTRY_PUBLIC_URL: '',
};

// 1. Seed: one account with 100,000 audit entries (plus its own), written in one transaction.
const app = await createAppContext(resolveConfig({ dataDir }, env), { logger: createLogger('warn'), env });
const owner = await app.services.identity.createUser({
  email: 'bench-owner@example.test',
  password: 'bench password 1',
  username: 'bench',
});
const account = await app.services.accounts.create(owner.id, { slug: 'bench-audit', legalName: 'Bench Audit Ltd' });
const seedStart = performance.now();
const insert = rawSqlite(app.kernel).prepare(
  'INSERT INTO account_audit_log (id, account_id, action, actor_id, actor_username, target_id, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
);
rawSqlite(app.kernel).transaction(() => {
  const at = new Date('2026-01-01T00:00:00Z').getTime();
  for (let i = 0; i < ENTRIES; i++) {
    insert.run(
      newId(),
      account.id,
      'account.updated',
      owner.id,
      'bench',
      account.id,
      JSON.stringify({ field: 'industry', oldValue: `v${i}`, newValue: `v${i + 1}` }),
      new Date(at + i * 1000).toISOString(),
    );
  }
  rawSqlite(app.kernel)
    .prepare('UPDATE account_audit_counts SET total = total + ? WHERE account_id = ?')
    .run(ENTRIES, account.id);
})();
// A second account's entries interleaved would not change the plan; one busy account is the worst case.
const seqs = rawSqlite(app.kernel)
  .prepare('SELECT min(seq) AS lo, max(seq) AS hi FROM account_audit_log WHERE account_id = ?')
  .get(account.id) as { lo: number; hi: number };
const scope = `audit:${account.id}`;
const limit = 20;
const cursors = {
  first: null as string | null,
  middle: app.kernel.cursors.encode(scope, { seq: Math.floor((seqs.lo + seqs.hi) / 2) }),
  last: app.kernel.cursors.encode(scope, { seq: seqs.lo + limit }),
};
const plan = rawSqlite(app.kernel)
  .prepare(
    'EXPLAIN QUERY PLAN SELECT seq, id, action FROM account_audit_log WHERE account_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
  )
  .all(account.id, seqs.lo + limit, limit + 1) as Array<{ detail: string }>;

// The query alone, in process, for the same three positions.
// Warm every position first, then interleave rounds so machine noise hits all three alike.
const direct: Record<string, number> = { first: 0, middle: 0, last: 0 };
for (const cursor of Object.values(cursors))
  for (let i = 0; i < 500; i++)
    await app.services.accounts.logs(OPERATOR, account.id, { limit, cursor: cursor ?? undefined });
for (let round = 0; round < 5; round++) {
  for (const [name, cursor] of Object.entries(cursors)) {
    const runs = 500;
    const started = performance.now();
    for (let i = 0; i < runs; i++)
      await app.services.accounts.logs(OPERATOR, account.id, { limit, cursor: cursor ?? undefined });
    direct[name] += ((performance.now() - started) * 1000) / runs / 5;
  }
}
await app.kernel.close();
console.log(`seeded ${ENTRIES} audit entries in ${Math.round(performance.now() - seedStart)} ms`);
console.log('EXPLAIN QUERY PLAN (page after a cursor):');
for (const row of plan) console.log(`  ${row.detail}`);
console.log(
  `service call (query + presenters), µs per page: first ${direct.first.toFixed(1)}, middle ${direct.middle.toFixed(1)}, last ${direct.last.toFixed(1)}`,
);

// 2. Serve the built binary and measure over HTTP.
// Started as the shipped launch commands start it (bench/lib.ts), on the server core.
const server = await startGantry({ env, dataDir });
const { url } = server;
const stop = () => void server.stop();
if (hasTaskset) spawnSync('taskset', ['-cp', '0', String(process.pid)]);
// Sign in over HTTP: the token's issuer is the running server's public URL.
const login = await fetch(`${url}/api/v1/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'bench-owner@example.test', password: 'bench password 1' }),
});
const token = ((await login.json()) as { data: { accessToken: string } }).data.accessToken;

function run(pathname: string, duration: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url: `${url}${pathname}`, connections: 20, duration, headers: { authorization: `Bearer ${token}` } },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

const paths: Record<string, string> = {};
for (const [name, cursor] of Object.entries(cursors)) {
  const pathname = `/api/v1/accounts/${account.id}/logs?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
  const check = await fetch(`${url}${pathname}`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await check.json()) as { data: unknown[]; meta: { total: number; hasMore: boolean } };
  if (check.status !== 200 || body.data?.length !== limit)
    throw new Error(`${name} page answered ${check.status}: ${JSON.stringify(body).slice(0, 300)}`);
  console.log(`${name} page: ${body.data.length} entries, total ${body.meta.total}, hasMore ${body.meta.hasMore}`);
  paths[name] = pathname;
}
for (const pathname of Object.values(paths)) await run(pathname, WARMUP_SEC);
// Rounds interleave the three pages so that load from elsewhere on the machine hits each alike.
const ROUNDS = 3;
const perRound = Math.max(1, Math.round(MEASURE_SEC / ROUNDS));
const results: Record<string, { ok: number; seconds: number; non2xx: number; p50: number[]; p99: number[] }> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, pathname] of Object.entries(paths)) {
    const r = await run(pathname, perRound);
    const acc = (results[name] ??= { ok: 0, seconds: 0, non2xx: 0, p50: [], p99: [] });
    acc.ok += r['2xx'];
    acc.seconds += r.duration;
    acc.non2xx += r.non2xx;
    acc.p50.push(r.latency.p50);
    acc.p99.push(r.latency.p99);
  }
}
stop();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

console.log(
  `\nGET /accounts/:id/logs?limit=${limit} over ${ENTRIES} entries (20 connections, ${ROUNDS} interleaved rounds of ${perRound} s per page after ${WARMUP_SEC} s warm-up each${hasTaskset ? ', server on CPU 1, client on CPU 0' : ''})`,
);
console.log('page     2xx/s    p50 ms  p99 ms  non-2xx   (p50/p99: median of the rounds)');
for (const [name, r] of Object.entries(results)) {
  console.log(
    `${name.padEnd(8)} ${(r.ok / r.seconds).toFixed(0).padStart(6)}  ${String(median(r.p50)).padStart(7)} ${String(median(r.p99)).padStart(7)}  ${r.non2xx}`,
  );
}
const ratio = results.last.ok / results.last.seconds / (results.first.ok / results.first.seconds);
console.log(`last/first throughput ratio: ${ratio.toFixed(2)} (1.00 = flat)`);
process.exit(0);
