import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { exposedNames, nameOwner, toolPrefixOf } from '../../src/connectors/tool-names.js';

const hash = (instanceId: string, toolKey: string, n = 6) =>
  createHash('sha256').update(`${instanceId}\n${toolKey}`).digest('hex').slice(0, n);
const prefixOf = (display_name: string, tool_prefix: string | null = null) =>
  toolPrefixOf({ display_name, tool_prefix, connector_key: 'mcp-generic' });

describe('MCP tool names (tool-names.ts)', () => {
  it('derives the prefix from the display name, or takes the instance own', () => {
    assert.equal(prefixOf('GitHub'), 'github__');
    assert.equal(prefixOf('  Café Ünïcode -- prod!! '), 'cafe_unicode_prod__');
    assert.equal(prefixOf('my__db'), 'my_db__');
    assert.equal(prefixOf('A very long display name for a connector'), 'a_very_long_display__');
    assert.equal(prefixOf('日本語'), 'mcp_generic__', 'nothing left: the connector key');
    assert.equal(prefixOf('GitHub', ''), '');
    assert.equal(prefixOf('GitHub', 'Gh.'), 'Gh.');
  });

  it('keeps short unique names, hashes long ones to 40 and every member of a clash', () => {
    const tools = [
      { instanceId: 'i1', toolKey: 'search', prefix: '' },
      { instanceId: 'i2', toolKey: 'SEARCH', prefix: '' },
      { instanceId: 'i1', toolKey: 'fetch', prefix: '' },
      { instanceId: 'i1', toolKey: 'x'.repeat(60), prefix: 'p__' },
    ];
    const names = exposedNames(tools);
    assert.deepEqual(names, [
      `search_${hash('i1', 'search')}`,
      `SEARCH_${hash('i2', 'SEARCH')}`,
      'fetch',
      `p__${'x'.repeat(30)}_${hash('i1', 'x'.repeat(60))}`,
    ]);
    assert.equal(names[3].length, 40);
    assert.deepEqual(exposedNames([...tools].reverse()), [...names].reverse(), 'order does not matter');
  });

  it('stays unique when a tool is named like another one hashed form', () => {
    const long = { instanceId: 'i1', toolKey: 'y'.repeat(50), prefix: '' };
    const [hashedName] = exposedNames([long]);
    const names = exposedNames([long, { instanceId: 'i2', toolKey: hashedName, prefix: '' }]);
    assert.equal(new Set(names).size, 2);
    assert.ok(names.every((n) => n.length <= 40 && /^[A-Za-z0-9_.-]+$/.test(n)));
  });

  it('keeps a bound name for its tool, gives another tool a hashed one, and retires it when the owner is renamed', () => {
    const alice = { instanceId: 'i-alice', toolKey: 'list_items', prefix: 'crm__' };
    const mallory = { instanceId: 'i-mallory', toolKey: 'list_items', prefix: 'crm__' };
    const bound = new Map([['crm__list_items', nameOwner(alice)]]);
    // Without a binding both would be hashed; with it only the newcomer is.
    assert.deepEqual(exposedNames([alice, mallory]), [
      `crm__list_items_${hash('i-alice', 'list_items')}`,
      `crm__list_items_${hash('i-mallory', 'list_items')}`,
    ]);
    assert.deepEqual(exposedNames([mallory, alice], bound), [
      `crm__list_items_${hash('i-mallory', 'list_items')}`,
      'crm__list_items',
    ]);
    // The owner renamed: its name is retired, and still not the newcomer's.
    const renamed = { ...alice, prefix: 'sales__' };
    assert.deepEqual(exposedNames([renamed, mallory], bound), [
      'sales__list_items',
      `crm__list_items_${hash('i-mallory', 'list_items')}`,
    ]);
    // Bound names compare ignoring case, as clients do.
    assert.deepEqual(exposedNames([{ ...mallory, toolKey: 'LIST_ITEMS' }], bound), [
      `crm__LIST_ITEMS_${hash('i-mallory', 'LIST_ITEMS')}`,
    ]);
  });

  it('keeps a hashed name an agent called after the clash that caused it is gone', () => {
    const a = { instanceId: 'i1', toolKey: 'search', prefix: '' };
    const b = { instanceId: 'i2', toolKey: 'search', prefix: '' };
    const [hashedA] = exposedNames([a, b]);
    assert.equal(hashedA, `search_${hash('i1', 'search')}`);
    const bound = new Map([[hashedA.toLowerCase(), nameOwner(a)]]);
    assert.deepEqual(exposedNames([a], bound), [hashedA], 'not back to "search" under the agent');
    assert.deepEqual(exposedNames([a]), ['search']);
  });
});
