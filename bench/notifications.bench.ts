// Notifications under load: a user with 100,000 notifications. Seeds through the service (in
// batches, each inside a transaction), shows the query plans, times first vs deep pages in
// process, then measures requests/s of unread-count and the list against the built binary
// with autocannon, next to a bare Hapi route in the same run (PERFORMANCE.md).
// Run: node build.mjs && node --import tsx bench/notifications.bench.ts
import { rawSqlite } from '../test/helpers/app.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Kysely, SqliteDialect, type CompiledQuery } from 'kysely';
import { resolveConfig } from '../src/config.js';
import { createAppContext } from '../src/app.js';
import { inTransaction } from '../src/db/tx.js';
import type { DB } from '../src/db/schema.js';
import { createLogger } from '../src/lib/logger.js';
import * as store from '../src/notifications/store.js';
import { benchSeconds } from './lib.js';

const TOTAL = Number(process.env.BENCH_NOTIFICATIONS ?? 100_000);
const BATCH = 1000;
const { warmup: WARMUP_SEC, duration: MEASURE_SEC } = benchSeconds({ warmup: 2, duration: 3 });
/** Each target is measured this many times, in forward then reverse order, and averaged. */
const ROUNDS = 2;
const CONNECTIONS = 20;
const BIN = fileURLToPath(new URL('../bin/gantry', import.meta.url));
const hasTaskset = spawnSync('taskset', ['-V']).status === 0;

const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-bench-notifications-'));
const env = {
  ...process.env,
  GANTRY_DATA_DIR: dataDir,
  GANTRY_LOG_LEVEL: 'error',
  GANTRY_RATE_LIMIT_MULTIPLIER: '1000000',
  GANTRY_PORT: '0',
  GANTRY_PUBLIC_URL: '',
  GANTRY_SCRYPT_COST: '1024',
};
const children: ChildProcess[] = [];

function pinSelf(): void {
  if (hasTaskset) spawnSync('taskset', ['-cp', '0', String(process.pid)]);
}

function startChild(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<{ url: string; proc: ChildProcess }> {
  const command = hasTaskset ? 'taskset' : process.execPath;
  const argv = hasTaskset ? ['-c', '1', process.execPath, ...args] : args;
  const proc = spawn(command, argv, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(proc);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start`)), 20_000);
    let buffer = '';
    proc.stdout!.on('data', (chunk) => {
      buffer += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(buffer);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1], proc });
      }
    });
    proc.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

// A bare Hapi route answering a small envelope: the framework ceiling of this run.
const BARE_HAPI = `
const Hapi = require('@hapi/hapi');
(async () => {
  const s = Hapi.server({ port: 0, host: '127.0.0.1' });
  s.route({ method: 'GET', path: '/x', handler: () => ({ data: { count: 100000 }, meta: { requestId: 'r', durationMs: 0 }, error: null }) });
  await s.start();
  console.log('listening on ' + s.info.uri);
})();`;

interface Figure {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function measure(name: string, url: string, headers: Record<string, string> = {}): Promise<Figure> {
  await autocannon({ url, connections: CONNECTIONS, duration: WARMUP_SEC, headers });
  const result = await autocannon({ url, connections: CONNECTIONS, duration: MEASURE_SEC, headers });
  const ok = result['2xx'];
  return {
    name,
    rps: Math.round(ok / MEASURE_SEC),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

function timeIt(fn: () => Promise<unknown>, runs: number): Promise<number> {
  return (async () => {
    for (let i = 0; i < 5; i++) await fn();
    const started = process.hrtime.bigint();
    for (let i = 0; i < runs; i++) await fn();
    return Number(process.hrtime.bigint() - started) / 1000 / runs;
  })();
}

async function main(): Promise<void> {
  pinSelf();
  const config = resolveConfig({ dataDir }, env);
  const app = await createAppContext(config, { env, logger: createLogger('error') });
  const { notifications, identity } = app.services;
  const user = await identity.createUser({ email: 'bench@example.test', password: 'bench password', verified: true });
  const other = await identity.createUser({ email: 'other@example.test', password: 'bench password', verified: true });

  // Seed: 100k for the user (a tenth of them read, a twentieth archived) plus noise for another.
  let started = Date.now();
  for (let done = 0; done < TOTAL; done += BATCH) {
    await inTransaction(app.kernel.db, async (trx) => {
      for (let i = 0; i < BATCH; i++) {
        await notifications.notify(trx, {
          userId: user.id,
          title: `Notification ${done + i}`,
          body: 'A body of ordinary length for an in-app notification.',
          category: i % 3 === 0 ? 'productivity' : 'system',
        });
        if (i % 10 === 0) await notifications.notify(trx, { userId: other.id, title: 'noise', body: 'noise' });
      }
    });
  }
  const seedMs = Date.now() - started;
  await app.kernel.db
    .updateTable('notifications')
    .set({ status: 'read', read_at: new Date().toISOString() })
    .where('user_id', '=', user.id)
    .where('seq', '<', 20_000)
    .where('status', '=', 'unread')
    .execute();
  await app.kernel.db
    .updateTable('notifications')
    .set({ status: 'archived', archived_at: new Date().toISOString() })
    .where('user_id', '=', user.id)
    .where('seq', '<', 5_000)
    .execute();
  rawSqlite(app.kernel).pragma('optimize');
  console.log(
    `seeded ${TOTAL} notifications for one user (+${TOTAL / 10} for another) through notify() in ${BATCH}-row transactions: ${seedMs} ms (${Math.round(((TOTAL * 1.1) / seedMs) * 1000)}/s)`,
  );

  // Query plans of exactly the statements the store runs (captured through a logging Kysely).
  const captured: CompiledQuery[] = [];
  const spy = new Kysely<DB>({
    dialect: new SqliteDialect({ database: rawSqlite(app.kernel) }),
    log: (event) => void captured.push(event.query),
  });
  const now = new Date().toISOString();
  const filter = { userId: user.id, now };
  const oldest = await app.kernel.db
    .selectFrom('notifications')
    .select((eb) => eb.fn.min('seq').as('s'))
    .where('user_id', '=', user.id)
    .where('status', '!=', 'archived')
    .executeTakeFirstOrThrow();
  const deepSeq = Number(oldest.s) + 21;
  const statements: Array<[string, () => Promise<unknown>]> = [
    ['unread count', () => store.countVisible(spy, { ...filter, status: 'unread' })],
    ['list, default filter, first page', () => store.listPage(spy, filter, { limit: 21 })],
    ['list total (offset meta)', () => store.countVisible(spy, filter)],
    ['list, cursor page deep in the list', () => store.listPage(spy, filter, { limit: 21, beforeSeq: deepSeq })],
    [
      'list, status=unread, cursor page',
      () => store.listPage(spy, { ...filter, status: 'unread' }, { limit: 21, beforeSeq: deepSeq + 20_000 }),
    ],
    ['list, category filter', () => store.listPage(spy, { ...filter, category: 'productivity' }, { limit: 21 })],
    ['stream start (latest live seq)', () => store.latestSeq(spy, user.id)],
    ['stream catch-up after a position', () => store.listAfter(spy, user.id, deepSeq + 90_000, now, 100)],
  ];
  console.log('\nEXPLAIN QUERY PLAN');
  for (const [name, run] of statements) {
    captured.length = 0;
    await run();
    const query = captured[0];
    const plan = rawSqlite(app.kernel)
      .prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
      .all(...(query.parameters as unknown[])) as Array<{ detail: string }>;
    console.log(`  ${name}:\n    ${query.sql}\n    -> ${plan.map((p) => p.detail).join(' | ')}`);
  }

  // In-process cost per call (service, not HTTP): first vs deep cursor page, offset deep page.
  const scope = `notifications:${user.id}::`;
  const deepCursor = app.kernel.cursors.encode(scope, { s: deepSeq });
  console.log('\nper call, in process (µs)');
  const perCall: Array<[string, () => Promise<unknown>]> = [
    [
      'unread count, uncached (index-only scan)',
      () => store.countVisible(app.kernel.db, { ...filter, status: 'unread' }),
    ],
    ['unreadCount (service, cached until a change)', () => notifications.unreadCount(user.id)],
    ['offset total, uncached (index-only scan)', () => store.countVisible(app.kernel.db, filter)],
    ['list offset=0 (rows + total)', () => notifications.list(user.id, { limit: 20 })],
    ['list cursor, first page', () => notifications.list(user.id, { limit: 20, paging: 'cursor' })],
    ['list cursor, deep page (last 20)', () => notifications.list(user.id, { limit: 20, cursor: deepCursor })],
    [
      'list offset, deep page (offset 94,960)',
      () => notifications.list(user.id, { limit: 20, offset: TOTAL - 5_000 - 40 }),
    ],
  ];
  for (const [name, run] of perCall) console.log(`  ${name.padEnd(46)} ${(await timeIt(run, 50)).toFixed(0)}`);
  // First vs deep cursor page interleaved, so the machine's noise hits both alike.
  const first = () => notifications.list(user.id, { limit: 20, paging: 'cursor' });
  const deep = () => notifications.list(user.id, { limit: 20, cursor: deepCursor });
  let firstUs = 0;
  let deepUs = 0;
  for (let round = 0; round < 20; round++) {
    firstUs += await timeIt(first, 25);
    deepUs += await timeIt(deep, 25);
  }
  console.log(
    `  cursor first vs deep page, interleaved: ${(firstUs / 20).toFixed(0)} vs ${(deepUs / 20).toFixed(0)} µs (deep/first ${(deepUs / firstUs).toFixed(2)})`,
  );
  await spy.destroy().catch(() => undefined);
  await app.kernel.close();

  // HTTP: the built binary pinned to CPU 1, autocannon here on CPU 0; the bare route first.
  const bare = await startChild(['-e', BARE_HAPI]);
  const reference = await measure('bare Hapi route (reference)', `${bare.url}/x`);
  bare.proc.kill('SIGTERM');
  const gantry = await startChild([BIN, 'serve']);
  // Signed in through the binary itself (its issuer URL names the port it chose).
  const login = await fetch(`${gantry.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.test', password: 'bench password' }),
  });
  const { data } = (await login.json()) as { data: { accessToken: string } };
  const auth = { authorization: `Bearer ${data.accessToken}` };
  const figures: Figure[] = [reference];
  const targets: Array<[string, string]> = [
    ['GET /notifications/unread-count', '/api/v1/notifications/unread-count'],
    ['GET /notifications (offset, first page)', '/api/v1/notifications?limit=20'],
    ['GET /notifications (cursor, first page)', '/api/v1/notifications?limit=20&paging=cursor'],
    [
      'GET /notifications (cursor, deep page)',
      `/api/v1/notifications?limit=20&cursor=${encodeURIComponent(deepCursor)}`,
    ],
  ];
  // Rounds in alternating order, so a noisy moment of the shared machine does not land on one target.
  const runs = new Map<string, Figure[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url] of round % 2 === 0 ? targets : [...targets].reverse()) {
      runs.set(name, [...(runs.get(name) ?? []), await measure(name, `${gantry.url}${url}`, auth)]);
    }
  }
  for (const [name] of targets) {
    const all = runs.get(name)!;
    const mean = (pick: (f: Figure) => number) => Math.round(all.reduce((sum, f) => sum + pick(f), 0) / all.length);
    figures.push({
      name,
      rps: mean((f) => f.rps),
      p50: mean((f) => f.p50),
      p99: mean((f) => f.p99),
      non2xx: all.reduce((sum, f) => sum + f.non2xx, 0),
    });
  }
  gantry.proc.kill('SIGTERM');

  console.log(
    `\nautocannon: ${CONNECTIONS} connections, ${WARMUP_SEC} s warm-up, ${MEASURE_SEC} s measured x ${ROUNDS} rounds (mean)${hasTaskset ? ', client on CPU 0, server on CPU 1' : ''}`,
  );
  for (const f of figures) {
    console.log(
      `  ${f.name.padEnd(42)} ${String(f.rps).padStart(6)} 2xx/s  p50 ${f.p50} ms  p99 ${f.p99} ms  non-2xx ${f.non2xx}  ${f === reference ? '' : `${((f.rps / reference.rps) * 100).toFixed(0)}% of bare Hapi`}`,
    );
  }
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });
