// The conformance harness's self-test: the official MCP conformance suite, pointed straight at the
// upstream test server, passes every scenario that applies to a tools gateway. It shows that the
// upstream implements the suite's test tools and that the runner reads the suite's verdicts, so
// the same run through Gantry's /api/v1/mcp fails only for Gantry's faults (docs/mcp-conformance.md).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { GATEWAY_SCENARIOS, runConformance, type ScenarioResult } from '../helpers/conformance.js';
import { type ConformanceUpstream, startConformanceUpstream } from '../helpers/conformance-upstream.js';

let upstream: ConformanceUpstream;
let results: ScenarioResult[];
let proxied: ScenarioResult[];
const PROXIED = [
  'dns-rebinding-protection',
  'server-sse-multiple-streams',
  'tools-call-with-progress',
  'tools-call-elicitation',
];

before(async () => {
  upstream = await startConformanceUpstream();
  // prompts-list is there to fail: the upstream serves no prompts, and a runner that saw no
  // failure there would be reading the suite wrong.
  results = await runConformance({ url: upstream.url, scenarios: [...GATEWAY_SCENARIOS, 'prompts-list'] });
  // The way to Gantry: the suite cannot send a token, so a loopback proxy adds it.
  proxied = await runConformance({ url: upstream.url, scenarios: PROXIED, bearerToken: 'conformance-token' });
});

after(async () => {
  await upstream?.close();
});

for (const scenario of GATEWAY_SCENARIOS) {
  test(`conformance ${scenario} passes against the upstream directly`, () => {
    const result = results.find((r) => r.scenario === scenario)!;
    assert.ok(result.passed, `${scenario}: ${result.failures.join('; ')}\n${result.output.slice(-4000)}`);
  });
}

test('a scenario the upstream does not serve is reported failed, with the check that failed', () => {
  const result = results.find((r) => r.scenario === 'prompts-list')!;
  assert.equal(result.passed, false);
  assert.match(result.failures.join('\n'), /^prompts-list: .*Method not found/m);
});

test('through the bearer proxy: the token reaches the server, SSE streams and Host/Origin checks still pass', () => {
  for (const result of proxied) assert.ok(result.passed, `${result.scenario}: ${result.failures.join('; ')}`);
  assert.deepEqual([...upstream.authorizations], ['Bearer conformance-token']);
});

test('the upstream saw the suite call its tools', () => {
  for (const tool of ['test_simple_text', 'test_tool_with_progress', 'test_sampling', 'test_elicitation']) {
    assert.ok(upstream.calls.includes(tool), `${tool} was not called`);
  }
});
