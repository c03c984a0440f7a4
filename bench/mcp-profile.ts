// Where a tools/call through Gantry spends its CPU (docs/mcp.md, Performance): the built binary
// under `--cpu-prof` while autocannon sends the stateless (2026-07-28) tools/call of
// bench/mcp.bench.ts for BENCH_DURATION seconds (default 10), then the profile summed by
// function and by package. Loopback only, bounded.
//   node --import tsx bench/mcp-profile.ts [--top N] [--session] [--connections N] [--traced]
// --session: inside a 2025-11-25 session (initialize first, Mcp-Session-Id on every call).
// --traced: with traces on, every request sampled, exported to a loopback OTLP collector.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createTestApp } from '../test/helpers/app.js';
import { addInstance, mcpUser } from '../test/helpers/mcp-gateway.js';
import { startOtlpCollector } from '../test/helpers/otlp-collector.js';
import { benchSeconds, pinLoadGenerator, requireBuilt, startGantry, startOnServerCore } from './lib.js';
import { parentsOf, type ProfileNode, shareOf, sumBy } from './profile-sums.js';

pinLoadGenerator(import.meta.url);
requireBuilt();
const deadline = setTimeout(() => {
  console.error('mcp profile: over 120 s, giving up');
  process.exit(1);
}, 120_000);
deadline.unref();

const top = Number(process.argv[process.argv.indexOf('--top') + 1]) || 40;
const session = process.argv.includes('--session');
const connections = Number(process.argv[process.argv.indexOf('--connections') + 1]) || 20;
const { warmup, duration } = benchSeconds({ warmup: 3, duration: 10 });
const profiles = mkdtempSync(path.join(tmpdir(), 'gantry-mcp-profile-'));

const upstream = await startOnServerCore(
  ['--import', 'tsx', fileURLToPath(new URL('mcp-upstream.ts', import.meta.url))],
  /upstream listening on (\S+)/,
  'mcp upstream',
);
const collector = process.argv.includes('--traced') ? await startOtlpCollector({ decode: false }) : null;
const gantry = await startGantry({
  env: {
    GANTRY_ALLOW_PRIVATE_NETWORKS: 'true',
    ...(collector ? { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER: 'always_on' } : {}),
  },
  nodeArgs: ['--max-semi-space-size=2', '--cpu-prof', `--cpu-prof-dir=${profiles}`],
});
const endpoint = `${gantry.url}/api/v1/mcp`;
const side = await createTestApp({
  dataDir: gantry.dataDir,
  env: { GANTRY_PUBLIC_URL: gantry.url, GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' },
});
const user = await mcpUser(side, endpoint);
await addInstance(side, user, `${upstream.match[1]}/one/mcp`, { displayName: 'Profile echo', toolPrefix: '' });
await side.close();

const version = session ? '2025-11-25' : '2026-07-28';
const headers: Record<string, string> = {
  authorization: `Bearer ${user.token}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': version,
};
if (session) {
  const init = await fetch(endpoint, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'profile', version: '1' } },
    }),
  });
  await init.text();
  headers['mcp-session-id'] = String(init.headers.get('mcp-session-id'));
  await fetch(endpoint, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
} else Object.assign(headers, { 'mcp-method': 'tools/call', 'mcp-name': 'echo' });
const params = session
  ? { name: 'echo', arguments: { text: 'hello' } }
  : {
      name: 'echo',
      arguments: { text: 'hello' },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': version,
        'io.modelcontextprotocol/clientInfo': { name: 'profile', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    };
const load = (seconds: number) =>
  autocannon({
    url: endpoint,
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
    connections,
    duration: seconds,
  });
// The warm-up's first calls load modules and open the upstream session: not the hot path.
await load(warmup);
const result = await load(duration);
console.log(
  `${session ? '2025 session' : 'stateless'}: ${Math.round(result['2xx'] / duration)} 2xx/s, non-2xx ${result.non2xx}`,
);
await gantry.stop();
await upstream.stop();
await collector?.close();

type Node = ProfileNode;
const file = readdirSync(profiles).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`no profile written in ${profiles}`);
const profile = JSON.parse(readFileSync(path.join(profiles, file), 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
// Only the measured load: the samples of its last `duration` seconds (startup, the warm-up and
// the setup before them are not the hot path), and not the idle ones.
const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
const span = profile.timeDeltas.reduce((a, b) => a + b, 0);
const windowStart = span - (duration + 0.5) * 1e6;
let at = 0;
let idle = 0;
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i] ?? 0;
  if (at < windowStart) return;
  if (byNode.get(id)?.callFrame.functionName === '(idle)') idle += profile.timeDeltas[i] ?? 0;
  else self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);
const place = (n: Node) => {
  const url = n.callFrame.url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  return (
    pkg ??
    (url.includes('gantry.cjs') ? 'gantry' : url.startsWith('node:') ? url : url ? path.basename(url) : '(native)')
  );
};
const sum = (key: (n: Node) => string) => sumBy(self, byNode, key);
const pct = shareOf(total);
console.log(
  `\nbusy ${(total / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s of the load's ${duration} s: ${Math.round(total / Math.max(1, result['2xx']))} µs of CPU per call`,
);
console.log('\nself time by place (busy samples):');
for (const [k, us] of sum(place).slice(0, 20)) console.log(`${pct(us)}  ${k}`);
console.log(`\nself time by function (top ${top}):`);
for (const [k, us] of sum(
  (n) => `${n.callFrame.functionName || '(anonymous)'} ${place(n)}:${n.callFrame.lineNumber}`,
).slice(0, top))
  console.log(`${pct(us)}  ${k}`);
clearTimeout(deadline);

// Inclusive time: each busy sample counts once for every function on its stack. After an await
// a stack starts again at the microtask queue, so an async function's own figure covers the
// stretches it runs, not what it awaits.
const parent = parentsOf(profile.nodes);
const inclusive = new Map<string, number>();
for (const [id, us] of self) {
  const seen = new Set<string>();
  for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
    const n = byNode.get(node)!;
    const key = `${n.callFrame.functionName || '(anonymous)'} ${place(n)}:${n.callFrame.lineNumber}`;
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + us);
  }
}
console.log(`\ninclusive time by function (top ${top}):`);
for (const [k, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
