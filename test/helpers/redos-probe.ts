/**
 * Run as a child process by test/http/connectors-schemas.test.ts: a catastrophic-backtracking
 * pattern blocks the whole process, so the parent bounds it by killing this child instead.
 * Prints one JSON line with the answers.
 */
import { createTestApp } from './app.js';
import { makeTeam } from './factories.js';

const C = '/api/v1/connectors';
const EVIL = '^(a+)+$';
const INPUT = `${'a'.repeat(40)}!`;

const t = await createTestApp();
try {
  const { owner } = await makeTeam(t.app);
  const h = owner.headers;
  const post = async (url: string, payload: object) => {
    const res = await t.inject({ method: 'POST', url: `${C}${url}`, headers: h, payload });
    return { status: res.statusCode, body: JSON.parse(res.payload) };
  };
  const def = await post('/definitions', {
    key: 'redos-probe',
    name: 'R',
    configSchema: { type: 'object', properties: { x: { type: 'string', pattern: EVIL } } },
  });
  const instance = await post('/instances', { connectorKey: 'redos-probe', displayName: 'r', config: { x: 'aaaa' } });
  const config = await post('/instances', { connectorKey: 'redos-probe', displayName: 'r', config: { x: INPUT } });
  const tool = await post(`/instances/${instance.body.data.id}/tools`, {
    toolKey: 't',
    displayName: 't',
    inputSchema: { type: 'object', properties: { x: { type: 'string', pattern: EVIL } } },
    outputSchema: { type: 'object' },
  });
  const invoke = await post(`/instances/${instance.body.data.id}/tools/${tool.body.data.id}/invoke`, {
    input: { x: INPUT },
  });
  const health = await t.inject({ method: 'GET', url: '/healthz' });
  process.stdout.write(
    `${JSON.stringify({ def: def.status, instance: instance.status, config, tool: tool.status, invoke, health: health.statusCode })}\n`,
  );
} finally {
  await t.close();
}
