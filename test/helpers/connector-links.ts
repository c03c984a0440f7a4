import assert from 'node:assert/strict';

/**
 * The link cookie a connector OAuth initiate answer sets (docs/connectors.md, OAuth linking):
 * the browser that started a link finishes it at the callback; any other one is sent to a page
 * that asks the linking member to confirm. As a `cookie` header for the callback request.
 */
export function linkCookieOf(initiated: { headers: Record<string, unknown> }): { cookie: string } {
  const set = [initiated.headers['set-cookie']].flat().filter((c): c is string => typeof c === 'string');
  const found = set.find((c) => c.startsWith('gantry_connector_link='));
  assert.ok(found, `the initiate answer sets the link cookie: ${JSON.stringify(set)}`);
  return { cookie: found.split(';')[0] };
}
