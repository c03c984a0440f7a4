import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { makeTeam } from './factories.js';
import type { withJson } from './json-inject.js';

const C = '/api/v1/connectors';

/**
 * An owner's instance of a custom definition of their own (manual tools, checked against their
 * schemas and never run: no adapter), and a way to add tools to it.
 */
export async function customInstance(t: ReturnType<typeof withJson>) {
  const { owner } = await makeTeam(t.app);
  const h = owner.headers;
  const key = `custom-${randomUUID().slice(0, 8)}`;
  const def = await t.inject({ method: 'POST', url: `${C}/definitions`, headers: h, payload: { key, name: 'S' } });
  assert.equal(def.statusCode, 201, def.body);
  const inst = await t.inject({
    method: 'POST',
    url: `${C}/instances`,
    headers: h,
    payload: { connectorKey: key, displayName: 's' },
  });
  assert.equal(inst.statusCode, 201, inst.body);
  const id = inst.json().data.id as string;
  let tools = 0;
  return {
    h,
    key,
    id,
    addTool: (inputSchema: unknown, toolKey = `t${++tools}`) =>
      t.inject({
        method: 'POST',
        url: `${C}/instances/${id}/tools`,
        headers: h,
        payload: { toolKey, displayName: 'T', inputSchema, outputSchema: { type: 'object' } },
      }),
  };
}
