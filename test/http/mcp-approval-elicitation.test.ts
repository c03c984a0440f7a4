import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  UrlElicitationRequiredError as ModernUrlElicitationRequiredError,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitationCompleteNotificationSchema,
  ErrorCode,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startLegacyMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { addInstance, endpointOf, legacyClient, mcpUser, type McpUser } from '../helpers/mcp-gateway.js';

// An approval-gated call shown to clients that declared URL elicitation: the approval page by
// the era's channel, the call answered at once, the identical retry run once after approval
// (docs/mcp.md, Calls; docs/connectors.md, Approvals of MCP calls).
let t: TestApp;
let upstream: McpFake;
let user: McpUser;

type Approval = { id: string; status: string; url: string; expiresAt: string };
const approvalOf = (result: unknown) =>
  ((result as { _meta?: Record<string, Approval> })._meta ?? {})['io.gantry/approval'];
const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0].text;

before(async () => {
  t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
  await t.server.start();
  upstream = await startLegacyMcpServer({ tools: [{ name: 'gated', inputSchema: { type: 'object' } }] });
  user = await mcpUser(t);
  const instance = await addInstance(t, user, upstream.url, { displayName: 'Fake', toolPrefix: '' });
  await instance.patchTool('gated', { requiresApproval: true });
});
after(async () => {
  await upstream.close();
  await t.close();
});

const approve = async (id: string) => {
  const res = await t.inject({
    method: 'POST',
    url: `/api/v1/connectors/approvals/${id}/approve`,
    headers: user.headers,
  });
  assert.equal(res.statusCode, 200, res.payload);
};
const pageOf = (id: string) => `${t.app.kernel.config.publicUrl}/approvals/${id}`;

/** SDK 2.x client pinned to 2026-07-28 that declares URL elicitation and accepts every one. */
async function modernElicitingClient(seen: Array<Record<string, unknown>>) {
  const client = new ModernClient(
    { name: 'modern-url', version: '2.0.0' },
    { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    seen.push(request.params as Record<string, unknown>);
    return { action: 'accept' };
  });
  await client.connect(
    new ModernTransport(new URL(endpointOf(t)), {
      requestInit: { headers: { authorization: `Bearer ${user.token}` } },
    }),
  );
  return client;
}

/** SDK 1.x client (2025-11-25 session) that declares URL elicitation and records completions. */
async function legacyElicitingClient(completed: string[]) {
  const client = new LegacyClient(
    { name: 'legacy-url', version: '1.0.0' },
    { capabilities: { elicitation: { url: {} } } },
  );
  client.setNotificationHandler(
    ElicitationCompleteNotificationSchema,
    (n) => void completed.push(n.params.elicitationId),
  );
  await client.connect(
    new LegacyTransport(new URL(endpointOf(t)), {
      requestInit: { headers: { authorization: `Bearer ${user.token}` } },
    }),
  );
  return client;
}

async function until(check: () => boolean, what: string) {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(check(), what);
}

describe('approval page by URL elicitation', () => {
  test('2026-07-28: an input_required URL elicitation of the page, answered at once; the retry after approval runs once', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const client = await modernElicitingClient(seen);
    const before = upstream.calls.length;
    // The client's driver shows the elicitation and retries with the answer: the call is pending.
    const first = await client.callTool({ name: 'gated', arguments: { m: 1 } });
    assert.equal(seen.length, 1);
    const approval = approvalOf(first);
    assert.equal(seen[0].mode, 'url');
    assert.equal(seen[0].url, pageOf(approval.id));
    assert.match(String(seen[0].message), /retry the call with exactly the same arguments/);
    assert.equal(seen[0].elicitationId, undefined, '2026-07-28 URL elicitations carry no elicitationId');
    assert.equal(first.isError, true);
    assert.equal(approval.status, 'pending');
    assert.match(text(first), /retry with exactly the same arguments/);
    assert.equal(upstream.calls.length, before, 'nothing ran');

    await approve(approval.id);
    const retry = await client.callTool({ name: 'gated', arguments: { m: 1 } });
    assert.notEqual(retry.isError, true, text(retry));
    assert.equal(seen.length, 1, 'an approved retry asks nothing');
    assert.equal(upstream.calls.length, before + 1, 'the retry ran once');
    // Used: the same call asks for a new approval, shown again.
    const again = await client.callTool({ name: 'gated', arguments: { m: 1 } });
    assert.equal(again.isError, true);
    assert.notEqual(approvalOf(again).id, approval.id);
    assert.equal(seen.length, 2);
    assert.equal(seen[1].url, pageOf(approvalOf(again).id));
    assert.equal(upstream.calls.length, before + 1);
    await client.close();
  });

  test('2025-11-25: URLElicitationRequired (-32042) with the page, then elicitation/complete once decided; the retry runs once', async () => {
    const completed: string[] = [];
    const client = await legacyElicitingClient(completed);
    const before = upstream.calls.length;
    const err = await client.callTool({ name: 'gated', arguments: { l: 1 } }).then(
      () => assert.fail('expected URLElicitationRequired'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof UrlElicitationRequiredError, String(err));
    assert.equal(err.code, ErrorCode.UrlElicitationRequired);
    assert.equal(err.elicitations.length, 1);
    const [elicitation] = err.elicitations;
    assert.equal(elicitation.mode, 'url');
    assert.equal(elicitation.url, pageOf(elicitation.elicitationId));
    assert.match(err.message, /retry the call with exactly the same arguments/);
    assert.equal(upstream.calls.length, before, 'nothing ran');
    // The same call while pending: the same approval.
    const again = await client.callTool({ name: 'gated', arguments: { l: 1 } }).catch((e: unknown) => e);
    assert.ok(again instanceof UrlElicitationRequiredError);
    assert.equal(again.elicitations[0].elicitationId, elicitation.elicitationId);

    await approve(elicitation.elicitationId);
    await until(() => completed.length > 0, 'notifications/elicitation/complete on the session stream');
    assert.deepEqual(completed, [elicitation.elicitationId]);
    const retry = await client.callTool({ name: 'gated', arguments: { l: 1 } });
    assert.notEqual(retry.isError, true, text(retry));
    assert.equal(upstream.calls.length, before + 1, 'the retry ran once');
    const next = await client.callTool({ name: 'gated', arguments: { l: 1 } }).catch((e: unknown) => e);
    assert.ok(next instanceof UrlElicitationRequiredError, 'used: a new approval is asked for');
    assert.notEqual(next.elicitations[0].elicitationId, elicitation.elicitationId);
    assert.equal(upstream.calls.length, before + 1);
    await client.close();
  });

  test('2025-11-25 through the 2.x client (legacy mode): the same -32042 error with the page', async () => {
    const client = new ModernClient(
      { name: 'modern-legacy-url', version: '2.0.0' },
      { capabilities: { elicitation: { url: {} } } },
    );
    await client.connect(
      new ModernTransport(new URL(endpointOf(t)), {
        requestInit: { headers: { authorization: `Bearer ${user.token}` } },
      }),
    );
    const err = await client.callTool({ name: 'gated', arguments: { v2: 1 } }).then(
      () => assert.fail('expected URLElicitationRequired'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ModernUrlElicitationRequiredError, String(err));
    assert.equal(err.code, -32042);
    assert.equal(err.elicitations[0].url, pageOf(err.elicitations[0].elicitationId));
    await client.close();
  });

  test('clients without URL elicitation (none, or form only) get the isError result with the link', async () => {
    const legacy = await legacyClient(endpointOf(t), user.token);
    const result = await legacy.callTool({ name: 'gated', arguments: { n: 1 } });
    assert.equal(result.isError, true);
    assert.ok(text(result).includes(approvalOf(result).url));
    await legacy.close();

    const formOnly = new ModernClient(
      { name: 'modern-form', version: '2.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    let asked = 0;
    formOnly.setRequestHandler('elicitation/create', async () => {
      asked++;
      return { action: 'decline' };
    });
    await formOnly.connect(
      new ModernTransport(new URL(endpointOf(t)), {
        requestInit: { headers: { authorization: `Bearer ${user.token}` } },
      }),
    );
    const modern = await formOnly.callTool({ name: 'gated', arguments: { n: 2 } });
    assert.equal(modern.isError, true);
    assert.match(text(modern), /retry with exactly the same arguments/);
    assert.equal(asked, 0);
    await formOnly.close();
  });
});
