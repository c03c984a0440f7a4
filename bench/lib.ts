// Shared machinery of the benchmarks (PERFORMANCE.md, How to measure): the built binary with
// the rate limiter raised out of the way, a bare Hapi reference in the same run, autocannon
// with 20 connections, client and server pinned to different cores where taskset exists.
// Loopback only; every run is bounded in time.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { resolveConfig } from '../src/config.js';
import { createAppContext } from '../src/app.js';
import { createLogger } from '../src/lib/logger.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(ROOT, 'bin/gantry');
const CONNECTIONS = 20;

/**
 * Seconds of warm-up and of measurement per run, the same two variables for every benchmark
 * (README.md, Benchmarks): BENCH_WARMUP and BENCH_DURATION, else the benchmark's defaults.
 */
export function benchSeconds(defaults: { warmup: number; duration: number }): { warmup: number; duration: number } {
  return {
    warmup: Number(process.env.BENCH_WARMUP ?? defaults.warmup),
    duration: Number(process.env.BENCH_DURATION ?? defaults.duration),
  };
}

const { warmup: WARMUP_S, duration: DURATION_S } = benchSeconds({ warmup: 3, duration: 8 });
/** Whether client and servers can be pinned to different cores. */
export const HAS_TASKSET = spawnSync('sh', ['-c', 'command -v taskset'], { encoding: 'utf8' }).stdout.trim() !== '';

const children = new Set<ChildProcess>();
const dirs = new Set<string>();
function cleanup(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

/** Re-runs the calling script on CPU 0 (the load generator's core); servers go to CPU 1. */
export function pinLoadGenerator(scriptUrl: string): void {
  if (!HAS_TASKSET || process.env.BENCH_PINNED) return;
  const child = spawnSync(
    'taskset',
    ['-c', '0', process.execPath, ...process.execArgv, fileURLToPath(scriptUrl), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
      env: { ...process.env, BENCH_PINNED: '1' },
    },
  );
  process.exit(child.status ?? 1);
}

export function requireBuilt(): void {
  if (!existsSync(path.join(ROOT, 'dist/gantry.cjs'))) {
    console.error('dist/gantry.cjs is missing: run `node build.mjs` (npm run bench does) first');
    process.exit(1);
  }
}

function onServerCore(args: string[]): { cmd: string; args: string[] } {
  return HAS_TASKSET
    ? { cmd: 'taskset', args: ['-c', '1', process.execPath, ...args] }
    : { cmd: process.execPath, args };
}

function waitForLine(child: ChildProcess, pattern: RegExp, what: string, timeoutMs = 15_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${err}`)), timeoutMs);
    child.stderr?.on('data', (d) => (err += d));
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}: ${err}`));
    });
  });
}

/**
 * Resident memory of a process (Linux /proc; null elsewhere), in both units: MiB (2^20 bytes,
 * what top and ps count in) and MB (10^6 bytes, what the goals are written in).
 */
export function rss(pid: number): { mib: number; mb: number; text: string } | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (!match) return null;
    const bytes = Number(match[1]) * 1024;
    const mib = Math.round(bytes / 104857.6) / 10;
    const mb = Math.round(bytes / 100_000) / 10;
    return { mib, mb, text: `${mib} MiB (${mb} MB)` };
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc; null elsewhere). */
function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of proc(5) (utime, stime), counted here from field 3 onwards.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

/**
 * CPU time in ms of the given processes, each with its direct children: for PostgreSQL's
 * postmaster, its backends and background writers. A child that exited is not counted.
 */
export function processTreeCpuMs(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    let children: number[] = [];
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      // No such process (or no children file): only its own time, if any.
    }
    for (const each of [pid, ...children]) total += cpuMs(each) ?? 0;
  }
  return total;
}

export interface Gantry {
  url: string;
  dataDir: string;
  proc: ChildProcess;
  /** Spawn to "gantry listening on" line, in ms. */
  startMs: number;
  env: NodeJS.ProcessEnv;
  cli(args: string[]): string;
  stop(): Promise<void>;
}

/** Starts the built binary on CPU 1 with a fresh data dir (or the one given). */
export async function startGantry(
  options: { env?: NodeJS.ProcessEnv; dataDir?: string; nodeArgs?: string[] } = {},
): Promise<Gantry> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'gantry-bench-'));
  dirs.add(dataDir);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GANTRY_DATA_DIR: dataDir,
    GANTRY_PORT: '0',
    GANTRY_HOST: '127.0.0.1',
    GANTRY_PUBLIC_URL: '',
    GANTRY_LOG_LEVEL: 'warn',
    GANTRY_RATE_LIMIT_MULTIPLIER: '100000',
    ...options.env,
  };
  // Launched plainly, as systemd/gantry.service and `npm start` do: the launcher adds its own
  // flags. With nodeArgs (a profiler's), node runs the launcher with those flags instead.
  const launch = options.nodeArgs ? [process.execPath, ...options.nodeArgs, BIN, 'serve'] : [BIN, 'serve'];
  const { cmd, args } = HAS_TASKSET
    ? { cmd: 'taskset', args: ['-c', '1', ...launch] }
    : { cmd: launch[0], args: launch.slice(1) };
  const started = performance.now();
  const proc = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  const match = await waitForLine(proc, /gantry listening on (\S+)/, 'gantry');
  const startMs = performance.now() - started;
  return {
    url: match[1],
    dataDir,
    proc,
    startMs,
    env,
    cli(cliArgs) {
      const res = spawnSync(process.execPath, [BIN, ...cliArgs], { env, encoding: 'utf8', timeout: 30_000 });
      if (res.status !== 0) throw new Error(`gantry ${cliArgs.join(' ')} failed: ${res.stderr}`);
      return res.stdout;
    },
    stop: () => stopChild(proc),
  };
}

function stopChild(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    proc.once('exit', () => {
      clearTimeout(timer);
      children.delete(proc);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

/** Starts a Node process (its arguments) on CPU 1, the servers' core, and waits for its ready line. */
export async function startOnServerCore(
  nodeArgs: string[],
  ready: RegExp,
  what: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ match: RegExpExecArray; proc: ChildProcess; stop(): Promise<void> }> {
  const { cmd, args } = onServerCore(nodeArgs);
  const proc = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  // A reference server may mint a large token pool before its ready line.
  const match = await waitForLine(proc, ready, what, 60_000);
  return { match, proc, stop: () => stopChild(proc) };
}

/**
 * The framework ceiling: a bare Hapi 21 route on CPU 1 answering the same envelope shape
 * (data, meta with requestId and durationMs, error null) as an authenticated kernel GET at
 * /bare, and, given a file, those bytes at /bytes (the reference of a prepared answer).
 */
export async function startBareHapi(
  options: { bytesFile?: string } = {},
): Promise<{ url: string; proc: ChildProcess; stop(): Promise<void> }> {
  const script = `
    const Hapi = require(${JSON.stringify(path.join(ROOT, 'node_modules/@hapi/hapi'))});
    const { randomUUID } = require('node:crypto');
    const bytesFile = ${JSON.stringify(options.bytesFile ?? null)};
    (async () => {
      const server = Hapi.server({ port: 0, host: '127.0.0.1' });
      // The same prepared bytes a cached Gantry answer sends, as JSON.
      if (bytesFile) {
        const bytes = require('node:fs').readFileSync(bytesFile);
        server.route({ method: 'GET', path: '/bytes', handler: (request, h) => h.response(bytes).type('application/json; charset=utf-8') });
      }
      server.route({ method: 'GET', path: '/bare', handler: (request, h) => h.response({
        data: { id: '0b6f3a52-9a0e-4d3b-8d8f-2f0a4f1d9c11', email: 'bench@example.test', fullName: 'Bench User', username: null, avatarUrl: null, emailVerified: true, createdAt: '2026-01-01T00:00:00.000Z' },
        meta: { requestId: randomUUID(), durationMs: Math.round((Date.now() - request.info.received) * 100) / 100 },
        error: null,
      }).header('X-Request-Id', randomUUID()) });
      await server.start();
      process.stdout.write('bare listening on ' + server.info.uri + '\\n');
      process.on('SIGTERM', () => server.stop().then(() => process.exit(0)));
    })();`;
  const { cmd, args } = onServerCore(['-e', script]);
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  const match = await waitForLine(proc, /bare listening on (\S+)/, 'bare hapi');
  return { url: match[1], proc, stop: () => stopChild(proc) };
}

export interface Figures {
  name: string;
  /** Successful (2xx, or 304 for a conditional target) responses per second: only these count as throughput. */
  rps: number;
  p50: number;
  p99: number;
  /** Answers other than the expected ones (non-2xx, or non-304 for a conditional target). */
  non2xx: number;
  errors: number;
  /**
   * Server CPU per successful response, in µs: steadier than throughput on a shared, noisy
   * machine (other processes steal wall time, not the server's own CPU time).
   */
  cpuUsPerReq: number | null;
}

export interface Target {
  name: string;
  url: string;
  /** The server process, to measure its CPU time. */
  pid?: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** The answer that counts as success: 2xx (default), or 304 for a conditional GET. */
  expect?: '2xx' | 304;
}

function run(target: Target, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: target.url,
    method: target.method ?? 'GET',
    headers: target.headers,
    body: target.body,
    connections: CONNECTIONS,
    duration: seconds,
  });
}

/** Warm-up (discarded), then the measured run. */
export async function measure(target: Target): Promise<Figures> {
  if (WARMUP_S > 0) await run(target, WARMUP_S);
  const cpuBefore = target.pid ? cpuMs(target.pid) : null;
  const result = await run(target, DURATION_S);
  const cpuAfter = target.pid ? cpuMs(target.pid) : null;
  // autocannon counts by class: every 3xx of a conditional GET target is its 304.
  const ok = target.expect === 304 ? result['3xx'] : result['2xx'];
  const cpuUsPerReq =
    cpuBefore !== null && cpuAfter !== null && ok > 0 ? Math.round(((cpuAfter - cpuBefore) * 1000) / ok) : null;
  return {
    name: target.name,
    rps: Math.round(ok / DURATION_S),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'] - ok,
    errors: result.errors,
    cpuUsPerReq,
  };
}

/**
 * The best of several rounds of one target (highest 2xx/s, lowest CPU per request and p50/p99):
 * on a shared machine interference only ever makes a figure worse, so the best round is the
 * closest to the code's own cost. Rounds of the target and its reference are interleaved.
 */
export function best(rounds: Figures[]): Figures {
  const pick = (f: (r: Figures) => number | null, better: (a: number, b: number) => number) => {
    const values = rounds.map(f).filter((v): v is number => v !== null);
    return values.length > 0 ? values.reduce((a, b) => better(a, b)) : null;
  };
  return {
    name: rounds[0].name,
    rps: pick((r) => r.rps, Math.max)!,
    p50: pick((r) => r.p50, Math.min)!,
    p99: pick((r) => r.p99, Math.min)!,
    non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    cpuUsPerReq: pick((r) => r.cpuUsPerReq, Math.min),
  };
}

/** Prints the figures, each with its ratio to the reference (same run, same machine). */
export function report(title: string, rows: Figures[], reference: Figures): void {
  const lines = [
    `\n${title} (${CONNECTIONS} connections, ${WARMUP_S} s warm-up, ${DURATION_S} s measured${HAS_TASKSET ? ', client CPU 0 / server CPU 1' : ', not pinned: taskset missing'})`,
    `${'target'.padEnd(44)} ${'2xx/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'non-2xx'.padStart(8)} ${'vs ref'.padStart(7)} ${'cpu µs/req'.padStart(11)} ${'cpu vs ref'.padStart(11)}`,
  ];
  for (const row of rows) {
    const ratio = reference.rps > 0 ? `${Math.round((row.rps / reference.rps) * 100)}%` : '-';
    const cpu = row.cpuUsPerReq === null ? '-' : String(row.cpuUsPerReq);
    // Requests per CPU-second relative to the reference: the throughput ratio on a quiet core.
    const cpuRatio =
      row.cpuUsPerReq && reference.cpuUsPerReq
        ? `${Math.round((reference.cpuUsPerReq / row.cpuUsPerReq) * 100)}%`
        : '-';
    lines.push(
      `${row.name.padEnd(44)} ${String(row.rps).padStart(8)} ${String(row.p50).padStart(7)} ${String(row.p99).padStart(7)} ${String(row.non2xx + row.errors).padStart(8)} ${ratio.padStart(7)} ${cpu.padStart(11)} ${cpuRatio.padStart(11)}`,
    );
  }
  console.log(lines.join('\n'));
}

/** A free loopback port, for a server that must know its URL before it starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Refresh-token chains, as clients refresh: each chain is one authorization (one family) whose
 * latest refresh token the next request spends, and whose answer carries the token after it.
 * A token is handed out once and a chain goes back to the queue only with its new token, so no
 * token is ever presented twice (a reuse would revoke its family). A chain whose request was
 * still in flight when a run stopped, or whose answer was not a 200, is dropped and a fresh seed
 * (a new authorization) takes its place: `seeds` must cover the chains every run drops.
 */
export class RefreshChains {
  private readonly ready: string[] = [];
  private nextSeed = 0;
  /** Answers other than 200: each drops its chain. */
  failed = 0;

  constructor(
    private readonly url: string,
    private readonly authorization: string,
    private readonly seeds: readonly string[],
  ) {}

  /** Seeds used so far: the chains started (a run drops those it leaves in flight). */
  get started(): number {
    return this.nextSeed;
  }

  private take(): string {
    const head = this.ready.shift();
    if (head !== undefined) return head;
    if (this.nextSeed === this.seeds.length)
      throw new Error(`all ${this.seeds.length} refresh chains used up: raise the number of seeds`);
    return this.seeds[this.nextSeed++];
  }

  /** autocannon options for one run; the chains carry over from one run to the next. */
  options(): autocannon.Options {
    return {
      url: this.url,
      requests: [
        {
          method: 'POST',
          headers: { authorization: this.authorization, 'content-type': 'application/x-www-form-urlencoded' },
          setupRequest: (req) => ({ ...req, body: `grant_type=refresh_token&refresh_token=${this.take()}` }),
          onResponse: (status, body) => {
            // The token read straight from the JSON text: the load generator shares a core with
            // nothing it measures, and must not be what sets the pace.
            const at = status === 200 ? body.indexOf('"refresh_token":"') : -1;
            if (at < 0) this.failed++;
            else this.ready.push(body.slice(at + 17, body.indexOf('"', at + 17)));
          },
        },
      ],
    };
  }
}

/**
 * A confidential client, `users` users, `chains` authorizations spread over them (one refresh
 * token each: the seed of a chain, RefreshChains), and one access token, minted through the
 * services of an app on `env`'s database, closed before the server that is measured starts.
 */
export async function mintRefreshChains(env: NodeJS.ProcessEnv, chains: number, users = 50) {
  const app = await createAppContext(resolveConfig({}, env), { logger: createLogger('warn'), env });
  try {
    const client = await app.services.oauth.clients.create({
      name: 'Bench',
      type: 'confidential',
      redirectUris: ['https://app.example/cb'],
      scopes: ['email:read', 'profile:read'],
    });
    const authorization = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
    const userIds: string[] = [];
    for (let u = 0; u < users; u++) {
      const user = await app.services.identity.createUser({
        email: `bench-${u}@example.test`,
        password: 'bench password',
        fullName: 'Bench User',
        verified: true,
      });
      userIds.push(user.id);
    }
    const seeds: string[] = [];
    let accessToken = '';
    for (let i = 0; i < chains; i++) {
      const verifier = randomBytes(32).toString('base64url');
      const redirect = await app.services.oauth.authorize.approve(userIds[i % users], {
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
      // The code grant always answers a refresh token (only the ID-JAG grant answers none).
      if (!('refresh_token' in issued)) throw new Error('the code grant answered no refresh token');
      seeds.push(issued.refresh_token);
    }
    return { authorization, accessToken, seeds };
  } finally {
    await app.kernel.close();
  }
}

/** One refresh-grant or GET target's figures as the engine comparisons print them. */
export interface LoadFigures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Server CPU per successful response, in µs, by process group (Gantry or the reference, PostgreSQL). */
  cpuUs?: Record<string, number>;
}
