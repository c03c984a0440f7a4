// The speed goals of PERFORMANCE.md ("Goals") side by side in one pinned run, 20 connections:
// an authenticated first-party GET (unread-count, session JWT) against a bare Hapi route with
// the same envelope, GET /api/v1/status 200 and 304 against a bare Hapi route sending the same
// bytes, each measured in interleaved rounds with its reference; then the idle RSS of
// `bin/gantry serve` started plainly (the launcher's own flags, nothing added).
//   node build.mjs && node --import tsx bench/goals.bench.ts
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  best,
  measure,
  pinLoadGenerator,
  report,
  requireBuilt,
  rss,
  startBareHapi,
  startGantry,
  type Figures,
  type Target,
} from './lib.js';

pinLoadGenerator(import.meta.url);
requireBuilt();

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const EMAIL = 'bench@example.test';
const PASSWORD = 'bench password 1';

const gantry = await startGantry({ env: { GANTRY_SCRYPT_COST: '1024' } });
gantry.cli(['user', 'create', '--email', EMAIL, '--password', PASSWORD, '--name', 'Bench User', '--verified']);
gantry.cli(['service', 'create', '--slug', 'api', '--name', 'API', '--sort-order', '1']);
gantry.cli(['component', 'create', '--service', 'api', '--slug', 'api-rest', '--name', 'REST']);
gantry.cli(['component', 'create', '--service', 'api', '--slug', 'api-stream', '--name', 'Streaming']);
gantry.cli(['component', 'set-status', 'api-stream', 'degraded_performance']);

// Idle: started plainly, seeded, then left alone for two seconds.
await new Promise((resolve) => setTimeout(resolve, 2000));
const idleRss = rss(gantry.proc.pid!);

const login = await fetch(`${gantry.url}/api/v1/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
});
if (login.status !== 200) throw new Error(`login failed: ${login.status} ${await login.text()}`);
const { data } = (await login.json()) as { data: { accessToken: string } };
const status = await fetch(`${gantry.url}/api/v1/status`);
const statusBytes = Buffer.from(await status.arrayBuffer());
const etag = status.headers.get('etag');
if (status.status !== 200 || !etag) throw new Error(`GET /api/v1/status answered ${status.status} without an ETag`);
const bytesFile = path.join(gantry.dataDir, 'bench-status.json');
writeFileSync(bytesFile, statusBytes);

const bare = await startBareHapi({ bytesFile });
const targets: Target[] = [
  { name: 'bare Hapi route, small envelope (ref A)', url: `${bare.url}/bare`, pid: bare.proc.pid },
  {
    name: 'GET /notifications/unread-count (session)',
    url: `${gantry.url}/api/v1/notifications/unread-count`,
    pid: gantry.proc.pid,
    headers: { authorization: `Bearer ${data.accessToken}` },
  },
  { name: 'bare Hapi route, status bytes (ref B)', url: `${bare.url}/bytes`, pid: bare.proc.pid },
  { name: 'GET /api/v1/status 200', url: `${gantry.url}/api/v1/status`, pid: gantry.proc.pid },
  {
    name: 'GET /api/v1/status 304 (If-None-Match)',
    url: `${gantry.url}/api/v1/status`,
    pid: gantry.proc.pid,
    headers: { 'if-none-match': etag },
    expect: 304,
  },
];
const rounds: Figures[][] = targets.map(() => []);
for (let round = 0; round < ROUNDS; round++)
  for (const [i, target] of targets.entries()) rounds[i].push(await measure(target));
const [refA, unread, refB, status200, status304] = rounds.map(best);
await bare.stop();
await gantry.stop();

report(`goals: authenticated GET (best of ${ROUNDS} interleaved rounds)`, [refA, unread], refA);
report(
  `goals: status, body ${statusBytes.length} bytes (best of ${ROUNDS} interleaved rounds)`,
  [refB, status200, status304],
  refB,
);
console.log(
  `\nidle RSS of a plain \`bin/gantry serve\`: ${idleRss?.text ?? '?'} (goal < 100 MB)` +
    `\ngoals: unread-count >= 80% of ref A; status 200 >= 90% and 304 >= 100% of ref B`,
);
