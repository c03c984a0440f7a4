// The official MCP conformance suite in server mode against Gantry's own endpoint: the built
// binary serving {public}/api/v1/mcp, a workspace whose one instance is the conformance upstream
// (empty tool prefix, so the suite's tool names match), and an MCP token bound to that workspace.
// Which scenarios run here: docs/mcp-conformance.md.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { GATEWAY_SCENARIOS, runConformance, type ScenarioResult } from '../helpers/conformance.js';
import { type ConformanceUpstream, startConformanceUpstream } from '../helpers/conformance-upstream.js';
import { addInstance, mcpUser } from '../helpers/mcp-gateway.js';
import { type RunningGantry, spawnGantry } from '../helpers/spawn.js';

/** The scenarios that pass through Gantry today; each must pass. */
const PASSING_THROUGH_GANTRY = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'json-schema-2020-12',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
  // The upstream's messages during a call, passed through (docs/connectors.md, MCP pass-through).
  'tools-call-with-logging',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  // The upstream closes its stream mid-call (test_reconnection); Gantry resumes it
  // (docs/connectors.md, Stream resumption).
  'server-sse-polling',
];

let g: RunningGantry;
let side: TestApp;
let upstream: ConformanceUpstream;
let results: ScenarioResult[];
const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-e2e-conformance-'));
// One scenario makes several requests (initialize, initialized, a GET stream, the call, DELETE);
// the endpoint allows 60 a minute per user.
const env = { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', GANTRY_RATE_LIMIT_MULTIPLIER: '20' };

before(async () => {
  [g, upstream] = await Promise.all([spawnGantry({ dataDir, env }), startConformanceUpstream()]);
  // Another process on the same data dir runs the OAuth dance and sets up the workspace.
  side = await createTestApp({ dataDir, env: { ...env, GANTRY_PUBLIC_URL: g.url } });
  const endpoint = `${g.url}/api/v1/mcp`;
  const user = await mcpUser(side, endpoint);
  await addInstance(side, user, upstream.url, { displayName: 'Conformance', toolPrefix: '' });
  results = await runConformance({ url: endpoint, scenarios: PASSING_THROUGH_GANTRY, bearerToken: user.token });
});

after(async () => {
  await g?.stop();
  await side?.close();
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

for (const scenario of PASSING_THROUGH_GANTRY) {
  test(`conformance ${scenario} passes through Gantry`, (t) => {
    const result = results.find((r) => r.scenario === scenario)!;
    assert.ok(result.passed, `${scenario}: ${result.failures.join('; ')}\n${result.output.slice(-4000)}`);
    for (const warning of result.warnings) t.diagnostic(`warning: ${warning}`);
  });
}

test('every gateway scenario is run here', () => {
  assert.deepEqual([...PASSING_THROUGH_GANTRY].sort(), [...GATEWAY_SCENARIOS].sort());
});

test("the suite's tool calls reached the upstream through Gantry", () => {
  for (const tool of ['test_simple_text', 'test_image_content', 'test_error_handling']) {
    assert.ok(upstream.calls.includes(tool), `${tool} was not called`);
  }
});
