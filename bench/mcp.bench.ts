// MCP benchmark (PERFORMANCE.md goal: tools/call through Gantry >= 0.5 of the same upstream
// called directly, p99 added < 5 ms): a 2026-07-28 upstream (bench/mcp-upstream.ts, SDK 2.x,
// stateless JSON) with `echo` and 999 other tools, called directly and through the built
// binary's /api/v1/mcp (modern era, stateless: protocol version and _meta on every POST), side
// by side in one run, from a workspace with the 1,000 tools and from one with `echo` alone (the
// size of the workspace's tool list is part of a call's cost); then tools/list (one page of 100
// of the 1,000 synced tools) both ways.
// Upstream and Gantry share CPU 1 (the servers' core), autocannon has CPU 0: through Gantry,
// that core runs both processes, so the ratio is the server-side cost of the hop. The cpu
// column is the named process's own CPU (the upstream's for direct rows, Gantry's for the
// others). Setup runs the OAuth dance and the instance sync in this process on the same data
// dir, as test/e2e/mcp.test.ts does. The two tools/call rows through Gantry are measured again
// against a second Gantry on the same data directory with traces on (every request sampled,
// exported over OTLP/HTTP to a loopback collector in this process that counts and drops them;
// docs/operations.md, Traces): the cost of tracing, which issue 31 puts at 5 % at most.
// Bounded: about 190 s.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { createTestApp } from '../test/helpers/app.js';
import { addInstance, mcpUser } from '../test/helpers/mcp-gateway.js';
import { startOtlpCollector } from '../test/helpers/otlp-collector.js';
import {
  best,
  type Figures,
  measure,
  pinLoadGenerator,
  report,
  requireBuilt,
  startGantry,
  startOnServerCore,
  type Target,
} from './lib.js';

pinLoadGenerator(import.meta.url);
requireBuilt();
const deadline = setTimeout(() => {
  console.error('mcp bench: over 260 s, giving up');
  process.exit(1);
}, 260_000);
deadline.unref();

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const VERSION = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const ECHO_ARGS = { text: 'hello from the bench' };

function rpc(method: string, params: Record<string, unknown>, name?: string) {
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': VERSION,
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } }),
  };
}
const call = rpc('tools/call', { name: 'echo', arguments: ECHO_ARGS }, 'echo');
const list = rpc('tools/list', {});

const upstream = await startOnServerCore(
  ['--import', 'tsx', fileURLToPath(new URL('mcp-upstream.ts', import.meta.url))],
  /upstream listening on (\S+)/,
  'mcp upstream',
);
const upstreamUrl = `${upstream.match[1]}/mcp`;
// The SDK floor (bench/mcp-bare-relay.ts): the same two SDK hops with nothing of Gantry's.
const relay = await startOnServerCore(
  ['--import', 'tsx', fileURLToPath(new URL('mcp-bare-relay.ts', import.meta.url)), `${upstream.match[1]}/one/mcp`],
  /relay listening on (\S+)/,
  'mcp bare relay',
);
const relayUrl = `${relay.match[1]}/mcp`;
const gantry = await startGantry({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
const endpoint = `${gantry.url}/api/v1/mcp`;

// A user, an account with its default workspace, an MCP token for {public}/api/v1/mcp with
// tools:call bound to that workspace (authorize, consent, code exchange), and an mcp-generic
// instance at the upstream with no tool prefix, synced (1,000 tools); and another user whose
// workspace has an instance serving `echo` alone.
const side = await createTestApp({
  dataDir: gantry.dataDir,
  env: { GANTRY_PUBLIC_URL: gantry.url, GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' },
});
const user = await mcpUser(side, endpoint);
await addInstance(side, user, upstreamUrl, { displayName: 'Bench upstream', toolPrefix: '' });
const small = await mcpUser(side, endpoint);
await addInstance(side, small, `${upstream.match[1]}/one/mcp`, { displayName: 'Bench echo', toolPrefix: '' });
await side.close();
const auth = { authorization: `Bearer ${user.token}` };
const smallAuth = { authorization: `Bearer ${small.token}` };
// The same data directory served with traces on: the tokens name the first one's URL.
const collector = await startOtlpCollector({ decode: false });
const traced = await startGantry({
  dataDir: gantry.dataDir,
  env: {
    GANTRY_ALLOW_PRIVATE_NETWORKS: 'true',
    GANTRY_PUBLIC_URL: gantry.url,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_TRACES_SAMPLER: 'always_on',
  },
});
const tracedEndpoint = `${traced.url}/api/v1/mcp`;

/** One request, asserted a real success: HTTP 200 and a JSON-RPC result, not an error nor isError. */
async function check(url: string, req: { headers: Record<string, string>; body: string }) {
  const res = await fetch(url, { method: 'POST', headers: req.headers, body: req.body });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const body = JSON.parse(text) as { result?: { isError?: boolean; content?: Array<{ text: string }>; tools?: [] } };
  assert.ok(body.result && !body.result.isError, text);
  return body.result;
}
async function spotCheck() {
  for (const [url, headers] of [
    [upstreamUrl, {}],
    [endpoint, auth],
    [endpoint, smallAuth],
    [relayUrl, {}],
    [tracedEndpoint, auth],
    [tracedEndpoint, smallAuth],
  ] as const) {
    const echoed = await check(url, { headers: { ...call.headers, ...headers }, body: call.body });
    assert.deepEqual(JSON.parse(echoed.content![0].text), ECHO_ARGS);
    if (url === relayUrl) continue;
    const page = await check(url, { headers: { ...list.headers, ...headers }, body: list.body });
    assert.equal(page.tools!.length, headers === smallAuth ? 1 : 100);
  }
}
await spotCheck();

const post = (name: string, url: string, pid: number | undefined, req: typeof call, extra = {}): Target => ({
  name,
  url,
  pid,
  method: 'POST',
  headers: { ...req.headers, ...extra },
  body: req.body,
});
const targets = [
  post('direct tools/call echo', upstreamUrl, upstream.proc.pid, call),
  post('gantry tools/call echo, 1,000-tool workspace', endpoint, gantry.proc.pid, call, auth),
  post('gantry tools/call echo, 1-tool workspace', endpoint, gantry.proc.pid, call, smallAuth),
  post('bare SDK relay tools/call echo', relayUrl, relay.proc.pid, call),
  post('direct tools/list (100 of 1,000)', upstreamUrl, upstream.proc.pid, list),
  post('gantry tools/list (100 of 1,000)', endpoint, gantry.proc.pid, list, auth),
  post('traced tools/call echo, 1,000-tool workspace', tracedEndpoint, traced.proc.pid, call, auth),
  post('traced tools/call echo, 1-tool workspace', tracedEndpoint, traced.proc.pid, call, smallAuth),
];
const rounds: Figures[][] = targets.map(() => []);
for (let round = 0; round < ROUNDS; round++)
  for (const [i, target] of targets.entries()) rounds[i].push(await measure(target));
// The same answers after the load: nothing degraded into errors under it.
await spotCheck();

const [directCall, gantryCall, smallCall, relayCall, directList, gantryList, tracedCall, tracedSmall] =
  rounds.map(best);
const summary = (what: string, through: Figures, direct: Figures) =>
  `${what}: Gantry/direct ${Math.round((through.rps / direct.rps) * 100)}% (goal >= 50%), p99 added ${(through.p99 - direct.p99).toFixed(1)} ms (goal < 5 ms), p50 added ${(through.p50 - direct.p50).toFixed(1)} ms`;
report(`MCP tools/call, best of ${ROUNDS} rounds`, [directCall, gantryCall, smallCall, relayCall], directCall);
report(`MCP tools/list, 1,000 tools synced, best of ${ROUNDS} rounds`, [directList, gantryList], directList);
report(
  `MCP tools/call with traces on, against traces off, best of ${ROUNDS} rounds`,
  [gantryCall, tracedCall],
  gantryCall,
);
report(
  `MCP tools/call with traces on, 1-tool workspace, best of ${ROUNDS} rounds`,
  [smallCall, tracedSmall],
  smallCall,
);
console.log(`\n${summary('tools/call, 1,000-tool workspace', gantryCall, directCall)}`);
console.log(summary('tools/call, 1-tool workspace', smallCall, directCall));
console.log(summary('tools/list', gantryList, directList));
console.log(
  `bare SDK relay: ${Math.round((relayCall.rps / directCall.rps) * 100)}% of direct; Gantry (1-tool workspace) ${Math.round((smallCall.rps / relayCall.rps) * 100)}% of the relay, ${Math.round((smallCall.cpuUsPerReq ?? 0) - (relayCall.cpuUsPerReq ?? 0))} µs CPU per call above it`,
);
const traceCost = (what: string, on: Figures, off: Figures) =>
  `traces on, ${what}: ${Math.round((on.rps / off.rps) * 100)}% of the throughput with traces off (goal >= 95%), ${Math.round((on.cpuUsPerReq ?? 0) - (off.cpuUsPerReq ?? 0))} µs CPU per call more`;
console.log(traceCost('1,000-tool workspace', tracedCall, gantryCall));
console.log(traceCost('1-tool workspace', tracedSmall, smallCall));
const exportedBytes = collector.exports.reduce((n, e) => n + e.bytes, 0);
assert.ok(collector.exports.length > 0, 'the traced Gantry exported its spans');
console.log(`the collector received ${collector.exports.length} exports, ${Math.round(exportedBytes / 1024)} KiB`);
await traced.stop();
await collector.close();
await gantry.stop();
await relay.stop();
await upstream.stop();
clearTimeout(deadline);
