// GET /api/v1/status (200) and with If-None-Match (304) against the built binary, beside a bare
// Hapi route serving the same bytes and, when nginx is installed, nginx serving them as a
// static file, all in the same run (PERFORMANCE.md). Loopback only; bounded (~60 s).
//   node --import tsx bench/status.bench.ts
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchSeconds } from './lib.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(ROOT, 'bin/gantry');
const { warmup: WARMUP_S, duration: DURATION_S } = benchSeconds({ warmup: 2, duration: 2 });
// Targets are measured in interleaved rounds and the median round is kept: the machine is
// shared and noisy, and interleaving exposes every target to the same noise.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 20;
const hasTaskset = spawnSync('sh', ['-c', 'command -v taskset'], { encoding: 'utf8' }).stdout.trim() !== '';
const nginxPath = spawnSync('sh', ['-c', 'command -v nginx || ls /usr/sbin/nginx 2>/dev/null'], { encoding: 'utf8' })
  .stdout.trim()
  .split('\n')[0];

// The load generator on CPU 0, every server on CPU 1.
if (hasTaskset && !process.env.BENCH_PINNED) {
  const child = spawnSync(
    'taskset',
    ['-c', '0', process.execPath, ...process.execArgv, fileURLToPath(import.meta.url)],
    { stdio: 'inherit', env: { ...process.env, BENCH_PINNED: '1' } },
  );
  process.exit(child.status ?? 1);
}
const onServerCore = (cmd: string, args: string[]) =>
  hasTaskset ? { cmd: 'taskset', args: ['-c', '1', cmd, ...args] } : { cmd, args };

if (!existsSync(path.join(ROOT, 'dist/gantry.cjs'))) {
  console.error('dist/gantry.cjs is missing: run `node build.mjs` first');
  process.exit(1);
}

const work = mkdtempSync(path.join(tmpdir(), 'gantry-bench-status-'));
chmodSync(work, 0o755); // nginx's workers run as another user and read the static file from here
const children: ChildProcess[] = [];
const cleanup = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
};
process.on('exit', () => {
  cleanup();
  rmSync(work, { recursive: true, force: true });
});

const env = {
  ...process.env,
  GANTRY_DATA_DIR: path.join(work, 'data'),
  GANTRY_LOG_LEVEL: 'warn',
  GANTRY_RATE_LIMIT_MULTIPLIER: '100000',
  GANTRY_PORT: '0',
  GANTRY_PUBLIC_URL: '',
};

function cli(args: string[]): void {
  const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) throw new Error(`gantry ${args.join(' ')}: ${r.stderr}`);
}

function waitForLine(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start`)), 15_000);
    let buffer = '';
    child.stdout!.on('data', (chunk) => {
      buffer += chunk;
      const m = pattern.exec(buffer);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.on('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

function start(cmd: string, args: string[], childEnv: NodeJS.ProcessEnv = process.env): ChildProcess {
  const pinned = onServerCore(cmd, args);
  const child = spawn(pinned.cmd, pinned.args, { env: childEnv, stdio: ['ignore', 'pipe', 'inherit'], cwd: ROOT });
  children.push(child);
  return child;
}

interface Figure {
  target: string;
  rps: number;
  p50: number;
  p99: number;
  other: number;
}

interface Target {
  target: string;
  url: string;
  expect: 200 | 304;
  headers?: Record<string, string>;
}

async function once(t: Target, duration: number): Promise<Figure> {
  const r = await autocannon({ url: t.url, connections: CONNECTIONS, duration, headers: t.headers ?? {} });
  const ok = t.expect === 200 ? r['2xx'] : r['3xx'];
  const total = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  return {
    target: t.target,
    rps: ok / duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    other: total - ok + r.errors + r.timeouts,
  };
}

async function measureAll(targets: Target[]): Promise<Figure[]> {
  for (const t of targets) await once(t, WARMUP_S);
  const rounds: Figure[][] = targets.map(() => []);
  for (let round = 0; round < ROUNDS; round++)
    for (const [i, t] of targets.entries()) rounds[i].push(await once(t, DURATION_S));
  return rounds.map((list) => [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)]);
}

// 1. Gantry, seeded through its CLI like an operator would.
cli(['migrate']);
cli(['service', 'create', '--slug', 'api', '--name', 'API', '--sort-order', '1']);
cli(['service', 'create', '--slug', 'dashboard', '--name', 'Dashboard', '--sort-order', '2']);
cli(['component', 'create', '--service', 'api', '--slug', 'api-rest', '--name', 'REST']);
cli(['component', 'create', '--service', 'api', '--slug', 'api-stream', '--name', 'Streaming']);
cli(['component', 'create', '--service', 'dashboard', '--slug', 'dashboard-web', '--name', 'Web']);
cli(['component', 'set-status', 'api-stream', 'degraded_performance']);
cli([
  'incident',
  'create',
  '--title',
  'Slow streaming',
  '--impact',
  'minor',
  '--status',
  'identified',
  '--message',
  'A slow upstream; mitigating',
  '--service',
  'api',
]);
const gantry = start(process.execPath, [BIN, 'serve'], env);
const [, gantryUrl] = await waitForLine(gantry, /gantry listening on (\S+)/, 'gantry');
const statusUrl = `${gantryUrl}/api/v1/status`;
const first = await fetch(statusUrl);
const bytes = Buffer.from(await first.arrayBuffer());
const etag = first.headers.get('etag')!;

// 2. A bare Hapi route serving the same bytes (the framework ceiling).
const bodyFile = path.join(work, 'status.json');
writeFileSync(bodyFile, bytes);
const bareScript = `
const Hapi = require('@hapi/hapi');
const body = require('fs').readFileSync(${JSON.stringify(bodyFile)});
(async () => {
  const server = Hapi.server({ port: 0, host: '127.0.0.1' });
  server.route({ method: 'GET', path: '/api/v1/status', handler: (r, h) => h.response(body).type('application/json; charset=utf-8') });
  await server.start();
  console.log('bare listening on ' + server.info.uri);
})();`;
const bare = start(process.execPath, ['-e', bareScript]);
const [, bareUrl] = await waitForLine(bare, /bare listening on (\S+)/, 'bare hapi');

// 3. nginx serving the same JSON as a static file, when installed.
let nginxUrl: string | null = null;
let nginxEtag: string | null = null;
if (nginxPath) {
  const prefix = path.join(work, 'nginx');
  mkdirSync(path.join(prefix, 'logs'), { recursive: true });
  mkdirSync(path.join(prefix, 'root/api/v1'), { recursive: true });
  writeFileSync(path.join(prefix, 'root/api/v1/status'), bytes);
  const port = 20000 + Math.floor(Math.random() * 20000);
  writeFileSync(
    path.join(prefix, 'nginx.conf'),
    `worker_processes 1; daemon off; pid ${prefix}/nginx.pid; error_log ${prefix}/logs/error.log warn;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 1000000;
  server { listen 127.0.0.1:${port}; root ${prefix}/root; default_type application/json;
    add_header Cache-Control "public, max-age=30, stale-while-revalidate=300"; } }
`,
  );
  const nginx = start(nginxPath, ['-p', prefix, '-c', path.join(prefix, 'nginx.conf')]);
  for (let i = 0; i < 50 && nginx.exitCode === null; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/status`);
      nginxEtag = r.headers.get('etag');
      nginxUrl = `http://127.0.0.1:${port}/api/v1/status`;
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const targets: Target[] = [
  { target: 'bare Hapi route, 200', url: `${bareUrl}/api/v1/status`, expect: 200 },
  { target: 'gantry GET /api/v1/status, 200', url: statusUrl, expect: 200 },
  {
    target: 'gantry GET /api/v1/status, If-None-Match 304',
    url: statusUrl,
    expect: 304,
    headers: { 'if-none-match': etag },
  },
  // The kernel's lightest route (request id, security headers, envelope): the floor every route stands on.
  { target: 'gantry GET /healthz (kernel floor), 200', url: `${gantryUrl}/healthz`, expect: 200 },
];
if (nginxUrl) {
  targets.push({ target: 'nginx static file, 200', url: nginxUrl, expect: 200 });
  if (nginxEtag)
    targets.push({
      target: 'nginx static file, If-None-Match 304',
      url: nginxUrl,
      expect: 304,
      headers: { 'if-none-match': nginxEtag },
    });
}
const figures = await measureAll(targets);

const reference = figures[0].rps;
console.log(
  `\nstatus bench: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up, median of ${ROUNDS} interleaved ${DURATION_S} s rounds, ${hasTaskset ? 'client on CPU 0, servers on CPU 1' : 'no taskset: unpinned'}, body ${bytes.length} bytes`,
);
console.log(
  [
    'target'.padEnd(48),
    'req/s'.padStart(9),
    'p50 ms'.padStart(7),
    'p99 ms'.padStart(7),
    'other'.padStart(6),
    'vs bare Hapi'.padStart(13),
  ].join(' '),
);
for (const f of figures) {
  console.log(
    [
      f.target.padEnd(48),
      f.rps.toFixed(0).padStart(9),
      String(f.p50).padStart(7),
      String(f.p99).padStart(7),
      String(f.other).padStart(6),
      `${((f.rps / reference) * 100).toFixed(0)}%`.padStart(13),
    ].join(' '),
  );
}
if (!nginxUrl) console.log('(nginx is not installed: its rows are left out)');
cleanup();
