import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';

const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;
type Headers = Record<string, string>;

describe('instance toolPrefix', () => {
  let t: App;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
  });
  after(() => t.close());

  const create = (h: Headers, payload: Record<string, unknown>) =>
    t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: h,
      payload: {
        connectorKey: 'mcp-generic',
        displayName: 'Git',
        config: { url: 'http://127.0.0.1:1/mcp' },
        ...payload,
      },
    });

  it('is null by default, set on POST and PATCH, and in every Instance answer', async () => {
    const h = (await makeTeam(t.app)).owner.headers;
    const plain = await create(h, {});
    assert.equal(plain.statusCode, 201, plain.body);
    assert.equal(plain.json().data.toolPrefix, null);
    const own = await create(h, { toolPrefix: 'gh.v2-' });
    assert.equal(own.json().data.toolPrefix, 'gh.v2-');
    const none = await create(h, { toolPrefix: '' });
    assert.equal(none.json().data.toolPrefix, '');
    const id = plain.json().data.id;
    const patched = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${id}`,
      headers: h,
      payload: { toolPrefix: 'Git_Hub__' },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().data.toolPrefix, 'Git_Hub__');
    assert.equal(
      (await t.inject({ method: 'GET', url: `${C}/instances/${id}`, headers: h })).json().data.toolPrefix,
      'Git_Hub__',
    );
    const list = (await t.inject({ method: 'GET', url: `${C}/instances`, headers: h })).json().data;
    assert.deepEqual(
      list.map((i: { toolPrefix: string | null }) => i.toolPrefix),
      ['Git_Hub__', 'gh.v2-', ''],
    );
    const cleared = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${id}`,
      headers: h,
      payload: { toolPrefix: null },
    });
    assert.equal(cleared.json().data.toolPrefix, null);
    const removed = await t.inject({ method: 'DELETE', url: `${C}/instances/${id}`, headers: h });
    assert.equal(removed.json().data.toolPrefix, null);
  });

  it('refuses prefixes outside [A-Za-z0-9_.-]{0,24} with 400 VALIDATION_FAILED naming toolPrefix', async () => {
    const h = (await makeTeam(t.app)).owner.headers;
    const id = (await create(h, {})).json().data.id;
    for (const toolPrefix of ['has space', 'a'.repeat(25), 'ünï', 'a/b', 'x:y', 5, true]) {
      for (const res of [
        await create(h, { toolPrefix }),
        await t.inject({ method: 'PATCH', url: `${C}/instances/${id}`, headers: h, payload: { toolPrefix } }),
      ]) {
        assert.equal(res.statusCode, 400, `${JSON.stringify(toolPrefix)}: ${res.body}`);
        assert.equal(res.json().error.code, 'VALIDATION_FAILED');
        assert.ok(res.json().error.details.some((d: { field: string }) => d.field === 'toolPrefix'));
      }
    }
    assert.equal((await create(h, { toolPrefix: 'a'.repeat(24) })).statusCode, 201);
  });
});
