import type { withJson } from './json-inject.js';
import { makeTeam } from './factories.js';
import { makeClient } from './oauth.js';
import { startModernMcpServer, type McpFake } from './mcp-servers.js';

const C = '/api/v1/connectors';

/**
 * A team (owner, admin, member) whose default workspace has an MCP instance with one tool
 * that requires approval (its `token` argument is writeOnly), an OAuth client, and a gate
 * call as the MCP endpoint would make it.
 */
export async function gatedTool(t: ReturnType<typeof withJson>) {
  const fake: McpFake = await startModernMcpServer({
    tools: [
      {
        name: 'wipe',
        inputSchema: {
          type: 'object',
          properties: { target: { type: 'string' }, token: { type: 'string', writeOnly: true } },
        },
      },
    ],
  });
  const team = await makeTeam(t.app, ['admin', 'member']);
  const h = team.owner.headers;
  const inst = (
    await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: h,
      payload: { connectorKey: 'mcp-generic', displayName: 'Files', config: { url: fake.url } },
    })
  ).json().data;
  const [tool] = (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h })).json()
    .data;
  await t.inject({
    method: 'PATCH',
    url: `${C}/instances/${inst.id}/tools/${tool.id}`,
    headers: h,
    payload: { requiresApproval: true },
  });
  const client = await makeClient(t as never, { name: 'Claude Test' });
  const { connectors, accounts } = t.app.services;
  const wsOf = (userId: string) =>
    accounts.access.workspace(
      {
        userId,
        kind: 'oauth',
        scopes: null,
        clientId: client.clientId,
        sessionId: null,
        accountId: null,
        tokenId: null,
      },
      { accountId: team.account.id },
    );
  const gate = async (
    args: Record<string, unknown>,
    opts: { userId?: string; clientId?: string; toolId?: string } = {},
  ) => {
    const userId = opts.userId ?? team.owner.user.id;
    return connectors.approvals.gateMcpCall({
      ws: await wsOf(userId),
      userId,
      clientId: opts.clientId ?? client.clientId,
      tool: { instanceId: inst.id, toolId: opts.toolId ?? tool.id, name: 'files__wipe' },
      args,
    });
  };
  const decide = (id: string, decision: 'approve' | 'reject', headers = team.members.admin.headers) =>
    t.inject({ method: 'POST', url: `${C}/approvals/${id}/${decision}`, headers });
  return { fake, team, inst, tool, client, gate, decide, wsOf };
}
