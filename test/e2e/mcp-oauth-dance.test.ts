import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeTeam } from '../helpers/factories.js';
import { startModernMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { startDocumentHost, type DocumentHost } from '../helpers/metadata-documents.js';
import {
  approveOnPage,
  DanceProvider,
  loopbackCertificate,
  mcpPing,
  playBrowser,
  recordingFetch,
  restApi,
  sdkEras,
} from '../helpers/mcp-dance.js';

// The whole OAuth dance of an MCP client, done by the official SDK of each era against the built
// binary: discovery from the 401, registration, sign-in, consent with a workspace, token with
// resource, tools, an approval, refresh, and revocation (docs/mcp.md, Connecting clients).
type Team = Awaited<ReturnType<typeof makeTeam>>;

describe('MCP clients of both eras doing the OAuth dance against the built binary', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-e2e-dance-'));
  const cert = loopbackCertificate();
  let g: RunningGantry;
  let side: TestApp;
  let docs: DocumentHost;
  let research: McpFake;
  let other: McpFake;
  let team: Team;
  let endpoint: string;
  let researchId: string;

  let api: ReturnType<typeof restApi>;

  /** An mcp-generic instance in `workspace` with an upstream bearer credential, synced and healthy. */
  async function addInstance(workspace: string, url: string, toolPrefix: string) {
    const [owner, at] = [team.owner, `/connectors/instances`];
    const config = { connectorKey: 'mcp-generic', displayName: toolPrefix, toolPrefix, config: { url } };
    const { id } = await api('POST', at, owner, { body: config, workspace });
    const cred = { credType: 'bearer_token', credentials: { token: 'upstream-secret' } };
    await api('POST', `${at}/${id}/credentials`, owner, { body: cred, workspace });
    const tools = await api('POST', `${at}/${id}/sync-tools`, owner, { workspace });
    assert.equal((await api('POST', `${at}/${id}/test`, owner, { workspace })).healthy, true);
    return { id: id as string, tools: tools as Array<{ id: string; toolKey: string }> };
  }

  before(async () => {
    docs = await startDocumentHost({ tls: cert });
    g = await spawnGantry({
      dataDir,
      // The document host's certificate is trusted the way an operator would add a private CA. One
      // user signs in a dozen times a minute here, over the sign-in budget of 8.
      env: {
        GANTRY_ALLOW_PRIVATE_NETWORKS: 'true',
        NODE_EXTRA_CA_CERTS: cert.certFile,
        GANTRY_RATE_LIMIT_MULTIPLIER: '10',
      },
    });
    side = await createTestApp({ dataDir, env: { GANTRY_PUBLIC_URL: g.url } });
    endpoint = `${g.url}/api/v1/mcp`;
    const object = { type: 'object' };
    research = await startModernMcpServer({
      tools: [
        { name: 'lookup', inputSchema: { ...object, properties: { q: { type: 'string' } } } },
        { name: 'wipe', inputSchema: { ...object, properties: { target: { type: 'string' } } } },
      ],
    });
    other = await startModernMcpServer({ tools: [{ name: 'payroll', inputSchema: object }] });
    team = await makeTeam(side.app, ['admin']);
    api = restApi(g.url, team.account.id);
    const ws = await api('POST', `/accounts/${team.account.id}/workspaces`, team.owner, { body: { name: 'Research' } });
    researchId = ws.id;
    await addInstance(team.account.defaultWorkspaceId, other.url, 'hr_');
    const inst = await addInstance(ws.id, research.url, 'res_');
    const wipe = inst.tools.find((x) => x.toolKey === 'wipe')!;
    const route = `/connectors/instances/${inst.id}/tools/${wipe.id}`;
    const patched = await api('PATCH', route, team.owner, { body: { requiresApproval: true }, workspace: ws.id });
    assert.equal(patched.requiresApproval, true);
  });
  after(async () => {
    await g.stop();
    await side.close();
    await Promise.all([docs.close(), research.close(), other.close()]);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(cert.dir, { recursive: true, force: true });
  });

  it('answers a request without a token with the challenge that starts discovery', async () => {
    const res = await mcpPing(endpoint);
    assert.equal(res.status, 401);
    assert.equal(
      res.headers.get('www-authenticate'),
      `Bearer resource_metadata="${g.url}/.well-known/oauth-protected-resource/api/v1/mcp", scope="tools:call"`,
    );
  });

  const cases = sdkEras().flatMap((era) => [false, true].map((cimd) => ({ ...era, cimd })));
  for (const [i, { era, sdk, cimd, connect, finish }] of cases.entries()) {
    const how = cimd ? 'a Client ID Metadata Document' : 'dynamic registration';
    it(`${era} with ${how}: discovery, sign-in, consent, tools, approval, refresh, revocation`, async () => {
      const redirect = `http://127.0.0.1:${43110 + i}/callback`;
      const name = `${sdk} Agent ${i}`;
      const metadata = {
        client_name: name,
        redirect_uris: [redirect],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
      const documentUrl = cimd ? docs.serve(`/agents/${i}.json`, metadata) : undefined;
      const provider = new DanceProvider(redirect, metadata, documentUrl);
      const { seen, fetchFn } = recordingFetch();

      // No token: the SDK reads the 401, discovers, registers and asks for the browser.
      await assert.rejects(connect(endpoint, provider, fetchFn), /nauthorized/);
      const urls = seen.map((r) => `${r.method} ${new URL(r.url).pathname} ${r.status}`);
      assert.ok(urls.includes('GET /.well-known/oauth-protected-resource/api/v1/mcp 200'), urls.join('\n'));
      assert.ok(urls.includes('GET /.well-known/oauth-authorization-server 200'), urls.join('\n'));
      assert.equal(urls.includes('POST /api/v1/oauth/register 201'), !cimd, urls.join('\n'));
      const clientId = provider.clientInformation()!.client_id;
      if (cimd) assert.equal(clientId, documentUrl);
      const asked = provider.authorizationUrl!;
      assert.equal(asked.searchParams.get('resource'), endpoint);
      assert.equal(asked.searchParams.get('scope'), 'tools:call');
      assert.equal(asked.searchParams.get('client_id'), clientId);

      // The browser: sign-in, then consent naming the client, unverified (a document with its
      // host), with a workspace choice.
      const marks = cimd ? `unverified, published by ${new URL(documentUrl!).host}` : 'unverified';
      const { consentHtml, workspaces, callback } = await playBrowser(asked, team.owner.user, 'Research');
      assert.ok(consentHtml.includes(`${name} (${marks}) wants to access your Gantry account`), consentHtml);
      assert.match(consentHtml, /<strong>unverified<\/strong>/);
      assert.ok(consentHtml.includes(`<strong>http://127.0.0.1:${new URL(redirect).port}</strong>`));
      assert.deepEqual(
        workspaces.map((w) => [w.name, w.selected]),
        [
          ['Default', true],
          ['Research', false],
        ],
      );
      assert.equal(`${callback.origin}${callback.pathname}`, redirect);
      assert.equal(callback.searchParams.get('iss'), g.url);
      if (cimd) assert.equal(docs.hits.get(`/agents/${i}.json`), 1);

      // The code for tokens, with the resource.
      await finish(endpoint, provider, fetchFn, callback);
      const exchange = seen.find((r) => r.form?.get('grant_type') === 'authorization_code')!;
      assert.equal(exchange.status, 200);
      assert.equal(exchange.form!.get('resource'), endpoint);
      const firstToken = provider.tokens()!.access_token;

      // Tools: only the chosen workspace's; the other's neither listed nor callable.
      const client = await connect(endpoint, provider, fetchFn);
      assert.deepEqual(
        (await client.listTools()).tools.map((x) => x.name),
        ['res_lookup', 'res_wipe'],
      );
      const upstreamBefore = research.calls.length;
      const found = await client.callTool({ name: 'res_lookup', arguments: { q: era } });
      assert.equal(found.isError, undefined, JSON.stringify(found));
      assert.deepEqual(JSON.parse((found.content as Array<{ text: string }>)[0].text), {
        tool: 'lookup',
        args: { q: era },
      });
      await assert.rejects(client.callTool({ name: 'hr_payroll', arguments: {} }), /Unknown tool: hr_payroll/);
      assert.equal(other.calls.length, 0);
      for (const r of research.requests) {
        assert.equal(r.headers.authorization, 'Bearer upstream-secret');
        assert.ok(!JSON.stringify(r.headers).includes(firstToken));
      }

      // An approval-gated call: pending with its link, approved by an admin, the retry runs once.
      const args = { name: 'res_wipe', arguments: { target: `/srv/${cimd ? 'b' : 'a'}` } };
      const pending = await client.callTool(args);
      assert.equal(pending.isError, true);
      const approval = (pending._meta as Record<string, { id: string; url: string; status: string }>)[
        'io.gantry/approval'
      ];
      assert.equal(approval.status, 'pending');
      assert.equal(approval.url, `${g.url}/approvals/${approval.id}`);
      assert.ok((pending.content as Array<{ text: string }>)[0].text.includes(approval.url));
      assert.equal(research.calls.length, upstreamBefore + 1);
      // An admin approves: on the page the link opens (signing in there), or through the API.
      const admin = team.members.admin;
      if (cimd) {
        const review = await approveOnPage(approval.url, admin.user);
        assert.ok(review.includes(`<dd>${name} (MCP, ${marks})</dd>`) && review.includes('<dd>Research</dd>'), review);
      } else {
        const route = `/connectors/approvals/${approval.id}/approve`;
        assert.equal((await api('POST', route, admin, { workspace: researchId })).status, 'approved');
      }
      const approved = await client.callTool(args);
      assert.equal(approved.isError, undefined, JSON.stringify(approved));
      assert.equal(research.calls.length, upstreamBefore + 2);
      assert.deepEqual(research.calls.at(-1), { name: 'wipe', args: args.arguments });
      const once = await client.callTool(args);
      assert.equal(once.isError, true, 'an approval runs one call');
      assert.equal(research.calls.length, upstreamBefore + 2);

      // The audit log has every call, with this client and the chosen workspace.
      const log = (await api('GET', `/accounts/${team.account.id}/logs?limit=100`, team.owner)) as Array<{
        action: string;
        metadata: Record<string, string>;
      }>;
      const rows = log.filter((r) => r.action === 'mcp.tool_called' && r.metadata.clientId === clientId).reverse();
      assert.deepEqual(
        rows.map((r) => [r.metadata.tool, r.metadata.outcome, r.metadata.workspaceId === researchId]),
        [
          ['res_lookup', 'completed', true],
          ['res_wipe', 'pending_approval', true],
          ['res_wipe', 'completed', true],
          ['res_wipe', 'pending_approval', true],
        ],
      );
      assert.equal(rows[2].metadata.approvalId, approval.id);
      assert.ok(!JSON.stringify(rows).includes('/srv/'), 'a digest of the arguments, never the arguments');

      // An access token the server refuses: the SDK refreshes, naming the resource again.
      provider.saved = { ...provider.saved!, access_token: 'not-a-token' };
      assert.deepEqual((await client.listTools()).tools.length, 2);
      const refresh = seen.find((r) => r.form?.get('grant_type') === 'refresh_token')!;
      assert.equal(refresh.status, 200);
      assert.equal(refresh.form!.get('resource'), endpoint);
      const refreshed = provider.tokens()!.access_token;
      assert.notEqual(refreshed, firstToken);

      // Revoking the grant ends access on the next request, refresh included.
      const revoked = await api('DELETE', `/oauth/grants/${encodeURIComponent(clientId)}`, team.owner);
      assert.equal(revoked.revoked, true);
      provider.authorizationUrl = null;
      await assert.rejects(client.listTools(), /nauthorized/);
      const refused = seen.filter((r) => r.form?.get('grant_type') === 'refresh_token').at(-1)!;
      assert.equal(refused.status, 400);
      assert.equal(provider.tokens(), undefined);
      assert.ok(provider.authorizationUrl, 'the SDK asks for a new authorization');
      const raw = await mcpPing(endpoint, refreshed);
      assert.equal(raw.status, 401);
      assert.match(raw.headers.get('www-authenticate')!, /error="invalid_token"/);
      await client.close();

      // The user allows it again: a new grant, access again.
      const again = await playBrowser(provider.authorizationUrl!, team.owner.user, 'Research');
      await finish(endpoint, provider, fetchFn, again.callback);
      const back = await connect(endpoint, provider, fetchFn);
      assert.equal((await back.listTools()).tools.length, 2);
      await back.close();
    });
  }
});
