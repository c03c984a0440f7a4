// Publishing an incident to 10,000 subscribers (docs/status.md, Benchmark): the publish call, the
// status page while the fan-out runs, and the fan-out itself. The built binary serves (CPU 1);
// this process (CPU 0) holds the load generator and publishes through the status service on the
// same database, as `gantry incident create` does next to a running server. The server learns of
// the change through the change feed and fans it out in the background: a mail per address into
// the outbox (no SMTP here: they stay queued) and a delivery per webhook, POSTed to a receiver in
// this process. Loopback only; bounded (about 2 minutes).
//   node build.mjs && node --import tsx bench/status-fanout.bench.ts
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { resolveConfig } from '../src/config.js';
import { createAppContext } from '../src/app.js';
import { inTransaction } from '../src/db/tx.js';
import { createLogger } from '../src/lib/logger.js';
import { seal } from '../src/lib/sealed.js';
import { secretContext } from '../src/status/subscriptions.js';
import { benchSeconds, pinLoadGenerator, requireBuilt, startGantry } from './lib.js';

pinLoadGenerator(import.meta.url);
requireBuilt();

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 10_000);
/** One subscriber in ten is a webhook (to the receiver below), the rest addresses. */
const WEBHOOKS = Math.floor(SUBSCRIBERS / 10);
const EMAILS = SUBSCRIBERS - WEBHOOKS;
const PUBLISHES = 5;
/** Rounds of (the page quiet, then one incident published and fanned out under the same load). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 20;
const { duration: DURATION_S } = benchSeconds({ warmup: 1, duration: 4 });

const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-bench-fanout-'));
// Private networks allowed: the webhooks' receiver is on loopback.
const serverEnv = { GANTRY_PUBLIC_URL: 'http://127.0.0.1:8080', GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' };
const env = { ...process.env, GANTRY_LOG_LEVEL: 'warn', ...serverEnv };
const app = await createAppContext(resolveConfig({ dataDir }, env), { logger: createLogger('warn'), env });
const { status } = app.services;
const { db } = app.kernel;
await status.createService({ slug: 'api', name: 'Public API' });
await status.createComponent({ serviceSlug: 'api', slug: 'api-rest', name: 'REST endpoints' });

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
async function timedPublish(title: string): Promise<{ ms: number; id: string }> {
  const started = performance.now();
  const incident = await status.createIncident({
    title,
    impact: 'minor',
    message: 'Looking',
    componentSlugs: ['api-rest'],
  });
  return { ms: performance.now() - started, id: incident.id };
}

const gantry = await startGantry({ dataDir, env: serverEnv });
const page = `${gantry.url}/status`;
/** The page under load for `seconds`, or until stopped (`autocannon`'s tracker has `stop`). */
const load = (seconds: number) => autocannon({ url: page, connections: CONNECTIONS, duration: seconds });
const figures = (r: autocannon.Result) =>
  `${String(Math.round(r['2xx'] / r.duration)).padStart(6)} 2xx/s  p50 ${String(r.latency.p50).padStart(3)} ms  p99 ${String(r.latency.p99).padStart(3)} ms  non-2xx ${r.non2xx}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the server has fanned the incident's event out; its time since the publish committed. */
async function fannedOut(incidentId: string, since: number): Promise<number> {
  for (;;) {
    const event = await db
      .selectFrom('status_events')
      .select('fanned_out_at')
      .where('subject_id', '=', incidentId)
      .executeTakeFirst();
    if (event?.fanned_out_at) return performance.now() - since;
    if (performance.now() - since > 120_000) throw new Error('the fan-out did not end within 2 minutes');
    await sleep(20);
  }
}

/** Waits until the server has POSTed every queued webhook delivery (so the next quiet round is quiet). */
async function webhooksSent(): Promise<void> {
  const deadline = performance.now() + 120_000;
  for (;;) {
    const pending = await db
      .selectFrom('status_webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    if (Number(pending.n) === 0) return;
    if (performance.now() > deadline) throw new Error('webhook deliveries still pending after 2 minutes');
    await sleep(100);
  }
}

await load(1); // warm-up: the page is built, the connections are open

// 1. The publish call with nobody subscribed, the page under the same load as below, after one
// discarded call that warms the statements up.
const alone: number[] = [];
{
  const busy = load(120);
  await sleep(250);
  for (let i = 0; i <= PUBLISHES; i++) {
    const published = await timedPublish(`Alone ${i}`);
    if (i > 0) alone.push(published.ms);
    await fannedOut(published.id, performance.now() - published.ms);
  }
  (busy as unknown as { stop(): void }).stop();
  await busy;
}

// 2. 10,000 confirmed subscribers (written directly: the confirmation round trip is not measured here).
let hooksReceived = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    hooksReceived++;
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
const at = new Date().toISOString();
for (let i = 0; i < SUBSCRIBERS; i += 500) {
  const rows = Array.from({ length: Math.min(500, SUBSCRIBERS - i) }, (_, j) => {
    const n = i + j;
    const id = crypto.randomUUID();
    const webhook = n < WEBHOOKS;
    return {
      id,
      kind: webhook ? 'webhook' : 'email',
      email: webhook ? null : `reader-${n}@example.com`,
      webhook_url: webhook ? `${hookUrl}/${n}` : null,
      webhook_host: webhook ? new URL(hookUrl).host : null,
      secret_sealed: webhook ? seal(app.kernel.secrets, `whsec_bench_${n}`, secretContext(id)) : null,
      component_ids: null,
      confirm_token_hash: null,
      confirm_expires_at: null,
      confirmed_at: at,
      disabled_at: null,
      disabled_reason: null,
      created_at: at,
      updated_at: at,
    };
  });
  await inTransaction(db, (trx) => trx.insertInto('status_subscriptions').values(rows).execute());
}

// 3. Rounds of the page quiet, then under the same load from the publish of an incident to the
// end of its fan-out to every subscriber (interleaved: the machine is shared and noisy).
const quiet: autocannon.Result[] = [];
const during: autocannon.Result[] = [];
const crowded: number[] = [];
const fanouts: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  quiet.push(await load(DURATION_S));
  const busy = load(120);
  await sleep(250); // the load is on before the publish
  const published = await timedPublish(`Crowded ${round}`);
  crowded.push(published.ms);
  fanouts.push(await fannedOut(published.id, performance.now() - published.ms));
  (busy as unknown as { stop(): void }).stop();
  during.push(await busy);
  await webhooksSent();
}
const notices = await db
  .selectFrom('mail_outbox')
  .select((eb) => eb.fn.countAll<number>().as('n'))
  .where('kind', '=', 'status_notice')
  .executeTakeFirstOrThrow();
const queued = await db
  .selectFrom('status_webhook_deliveries')
  .select((eb) => eb.fn.countAll<number>().as('n'))
  .executeTakeFirstOrThrow();
/** The median round by throughput. */
const middle = (rounds: autocannon.Result[]) =>
  [...rounds].sort((a, b) => a['2xx'] / a.duration - b['2xx'] / b.duration)[Math.floor(rounds.length / 2)];

const fanoutSeconds = median(fanouts) / 1000;
console.log(
  `\nStatus fan-out: ${SUBSCRIBERS} confirmed subscribers (${EMAILS} addresses, ${WEBHOOKS} webhooks), SQLite, ${CONNECTIONS} connections on GET /status`,
);
console.log(
  `publish call (createIncident), nobody subscribed, the page under load, median of ${PUBLISHES}: ${median(alone).toFixed(1)} ms`,
);
console.log(
  `publish call with ${SUBSCRIBERS} subscribers, the page under load, median of ${crowded.length}: ${median(crowded).toFixed(1)} ms`,
);
console.log(
  `fan-out of one incident (publish to the event's last batch), median of ${fanouts.length}: ${Math.round(median(fanouts))} ms: ${Math.round(EMAILS / fanoutSeconds)} mails enqueued/s, ${Math.round(WEBHOOKS / fanoutSeconds)} webhook deliveries queued/s (${Math.round(SUBSCRIBERS / fanoutSeconds)} subscribers/s)`,
);
console.log(`GET /status quiet (${DURATION_S} s), median of ${ROUNDS} rounds: ${figures(middle(quiet))}`);
console.log(`GET /status during a fan-out, median of ${ROUNDS} rounds: ${figures(middle(during))}`);
console.log(
  `outbox rows written: ${notices.n} (${crowded.length} incidents x ${EMAILS}); webhook deliveries queued: ${queued.n} (x ${WEBHOOKS}), POSTs received: ${hooksReceived}`,
);

await gantry.stop();
await app.kernel.close();
receiver.close();
if (
  Number(notices.n) !== crowded.length * EMAILS ||
  Number(queued.n) !== crowded.length * WEBHOOKS ||
  hooksReceived !== Number(queued.n)
) {
  console.error('a fan-out did not reach every subscriber exactly once');
  process.exit(1);
}
