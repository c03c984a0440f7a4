// Chat runs through the router against a zero-latency fake OpenAI-compatible provider on
// loopback: runs/s over HTTP (built binary, rate limits raised, wallet funded), and the
// router's own overhead per run (in process: router.route() against a plain fetch of the same
// fake). The server runs on CPU 1, this process (client and fake provider) on CPU 0 where
// taskset exists. Run: node build.mjs && node --import tsx bench/ai.bench.ts
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchSeconds, startGantry } from './lib.js';
import { resolveConfig } from '../src/config.js';
import { createAppContext } from '../src/app.js';
import { createLogger } from '../src/lib/logger.js';
import { Router } from '../src/ai/router.js';
import { systemClock } from '../src/lib/clock.js';

const { warmup: WARMUP_SEC, duration: MEASURE_SEC } = benchSeconds({ warmup: 3, duration: 10 });
const hasTaskset = spawnSync('taskset', ['--version']).status === 0;
if (!existsSync(fileURLToPath(new URL('../dist/gantry.cjs', import.meta.url)))) {
  console.error('build first: node build.mjs');
  process.exit(1);
}
if (hasTaskset) spawnSync('taskset', ['-cp', '0', String(process.pid)]);

// The fake provider: answers every chat completion at once, with usage.
const API_KEY = 'sk-bench-0123456789abcdef';
const answer = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  model: 'bench-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 },
});
const models = JSON.stringify({ object: 'list', data: [{ id: 'bench-model' }] });
const fake = createServer((req, res) => {
  req.resume();
  const body = req.method === 'GET' ? models : answer; // GET /v1/models: the health probe
  req.on('end', () =>
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body),
  );
});
await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
const fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;

const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-bench-ai-'));
const env = {
  ...process.env,
  GANTRY_DATA_DIR: dataDir,
  GANTRY_LOG_LEVEL: 'warn',
  GANTRY_SCRYPT_COST: '1024',
  GANTRY_RATE_LIMIT_MULTIPLIER: '100000',
  GANTRY_PORT: '0',
  GANTRY_PUBLIC_URL: '',
  GANTRY_ALLOW_PRIVATE_NETWORKS: 'true',
};

// 1. Seed: an entitled account, a funded wallet, the provider with a price.
const app = await createAppContext(resolveConfig({ dataDir }, env), { logger: createLogger('warn'), env });
const user = await app.services.identity.createUser({
  email: 'bench-ai@example.test',
  password: 'bench password 1',
  fullName: 'Bench User',
});
const account = await app.services.accounts.create(user.id, { slug: 'bench-ai', legalName: 'Bench AI Ltd' });
await app.services.accounts.setEntitlement(account.id, 'ai', true);
await app.services.wallet.credit(user.id, 1_000_000);
await app.services.ai.admin.set({
  name: 'openai',
  baseUrl: fakeUrl,
  apiKey: API_KEY,
  models: ['bench-model'],
  priceIn: 1,
  priceOut: 2,
});

// 2. Router overhead, in process: router.route() (adapter, breaker, wire mapping, checks)
// against the same request sent with a bare fetch. Interleaved rounds to share the noise.
const [config] = await app.services.ai.admin.configured();
const router = new Router({ threshold: 3, cooldownMs: 30_000 }, systemClock, {
  allowPrivateNetworks: true,
  timeoutMs: 10_000,
});
const messages = [{ role: 'user' as const, content: 'How are you today?' }];
const bare = async () => {
  const r = await fetch(`${fakeUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ model: 'bench-model', messages, max_tokens: 1024, stream: false }),
  });
  await r.json();
};
const routed = async () => {
  const out = await router.route([{ config, model: 'bench-model' }], messages, 1024);
  if (!out.ok) throw new Error('route failed');
};
const micro = { bare: 0, routed: 0 };
for (let i = 0; i < 300; i++) {
  await bare();
  await routed();
}
const N = 1000;
const MICRO_ROUNDS = 5;
for (let round = 0; round < MICRO_ROUNDS; round++) {
  for (const [name, fn] of [
    ['bare', bare],
    ['routed', routed],
  ] as const) {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await fn();
    micro[name] += ((performance.now() - t0) * 1000) / N / MICRO_ROUNDS;
  }
}
// The router's own bookkeeping (breaker, candidate walk, attempts) with an adapter that answers in memory.
const instant = {
  name: 'openai' as const,
  defaultModel: 'bench-model',
  chat: async () => ({ content: 'ok', model: 'bench-model', inputTokens: 20, outputTokens: 2 }),
  ping: async () => undefined,
  stream: () => {
    throw new Error('not benchmarked');
  },
};
const memRouter = new Router(
  { threshold: 3, cooldownMs: 30_000 },
  systemClock,
  { allowPrivateNetworks: true, timeoutMs: 10_000 },
  { openai: instant, anthropic: instant, google: instant },
);
for (let i = 0; i < 10_000; i++) await memRouter.route([{ config, model: 'bench-model' }], messages, 1024);
const m0 = performance.now();
for (let i = 0; i < 100_000; i++) await memRouter.route([{ config, model: 'bench-model' }], messages, 1024);
const bookkeeping = ((performance.now() - m0) * 1000) / 100_000;
await app.kernel.close();
console.log(`router bookkeeping alone (in-memory adapter): ${bookkeeping.toFixed(2)} µs/run`);
console.log(
  `in process, sequential: bare fetch ${micro.bare.toFixed(0)} µs/call, router.route ${micro.routed.toFixed(0)} µs/call, router overhead ${(micro.routed - micro.bare).toFixed(0)} µs/run`,
);

// 3. Serve the built binary.
// Started as the shipped launch commands start it (bench/lib.ts), on the server core.
const server = await startGantry({ env, dataDir });
const { url } = server;
const stop = () => void server.stop();
const login = await fetch(`${url}/api/v1/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'bench-ai@example.test', password: 'bench password 1' }),
});
const token = ((await login.json()) as { data: { accessToken: string } }).data.accessToken;
const runBody = JSON.stringify({ messages });
const check = await fetch(`${url}/api/v1/features/chat/runs`, {
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  body: runBody,
});
if (check.status !== 201) throw new Error(`a run answered ${check.status}: ${(await check.text()).slice(0, 300)}`);

interface Target {
  name: string;
  opts: Partial<autocannon.Options>;
}
const targets: Target[] = [
  {
    name: 'POST /features/chat/runs',
    opts: {
      url: `${url}/api/v1/features/chat/runs`,
      method: 'POST',
      body: runBody,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    },
  },
  {
    name: 'GET /ai/operations/rate-limit (JWT + entitlement)',
    opts: { url: `${url}/api/v1/ai/operations/rate-limit`, headers: { authorization: `Bearer ${token}` } },
  },
  {
    name: 'fake provider alone',
    opts: {
      url: `${fakeUrl}/v1/chat/completions`,
      method: 'POST',
      body: JSON.stringify({ model: 'bench-model', messages }),
      headers: { 'content-type': 'application/json' },
    },
  },
];
const bench = (opts: Partial<autocannon.Options>, duration: number) =>
  new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ connections: 20, duration, ...opts } as autocannon.Options, (err, result) =>
      err ? reject(err) : resolve(result),
    ),
  );

for (const t of targets) await bench(t.opts, WARMUP_SEC);
// Rounds interleave the targets so that load from elsewhere on the machine hits each alike.
const ROUNDS = 3;
const perRound = Math.max(1, Math.round(MEASURE_SEC / ROUNDS));
const results = targets.map(() => ({
  ok: 0,
  seconds: 0,
  non2xx: 0,
  rates: [] as number[],
  p50: [] as number[],
  p99: [] as number[],
}));
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, t] of targets.entries()) {
    const r = await bench(t.opts, perRound);
    const acc = results[i];
    acc.ok += r['2xx'];
    acc.seconds += r.duration;
    acc.non2xx += r.non2xx;
    acc.rates.push(r['2xx'] / r.duration);
    acc.p50.push(r.latency.p50);
    acc.p99.push(r.latency.p99);
  }
}
stop();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(
  `\n20 connections, ${ROUNDS} interleaved rounds of ${perRound} s per target after ${WARMUP_SEC} s warm-up${hasTaskset ? ', server on CPU 1, client and fake provider on CPU 0' : ''}`,
);
console.log(`${'target'.padEnd(52)}  2xx/s  best round  p50 ms  p99 ms  non-2xx   (p50/p99: median of the rounds)`);
for (const [i, t] of targets.entries()) {
  const r = results[i];
  console.log(
    `${t.name.padEnd(52)} ${(r.ok / r.seconds).toFixed(0).padStart(6)}  ${Math.max(...r.rates)
      .toFixed(0)
      .padStart(10)}  ${String(median(r.p50)).padStart(6)}  ${String(median(r.p99)).padStart(6)}  ${r.non2xx}`,
  );
}
console.log(
  `runs / rate-limit GET throughput: ${(results[0].ok / results[0].seconds / (results[1].ok / results[1].seconds)).toFixed(2)}`,
);
fake.close();
process.exit(0);
