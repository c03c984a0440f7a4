import type { Kernel } from '../kernel.js';
import type { WorkspaceContext } from '../accounts/access.js';
import { inTransaction } from '../db/tx.js';
import type { SealedValues } from '../lib/sealed-rotation.js';
import { createApprovalReview } from './approval-review.js';
import { createApprovals } from './approvals.js';
import { createMcpApprovals } from './approvals-mcp.js';
import { createConnectorsContext, type ConnectorsDeps } from './context.js';
import { createDefinitions } from './definitions.js';
import { createExposedTools } from './exposed-tools.js';
import { createHealthCheck } from './health.js';
import { createInstanceCredentials } from './instance-credentials.js';
import { createInstances } from './instances.js';
import { createInvoker } from './invoke.js';
import { createMcpSessions } from './mcp-sessions.js';
import { callbackUrl } from './oauth-client.js';
import { createOauthLinking } from './oauth-linking.js';
import { createTokenRefresh } from './oauth-refresh.js';
import { EMPTY_CONFIG_SCHEMA } from './builtins.js';
import { presentDefinition } from './presenters.js';
import { CONNECTOR_SEALED_COLUMNS, reloadKeyring, KEYRING_TOPIC } from './rotation.js';
import { createToolCatalog } from './tools.js';
import { TOOLS_CHANGED_TOPIC, type Actor, type CustomDefinitionInput, type SystemDefinitionInput } from './types.js';

export { type ConnectorsDeps } from './context.js';
export type { Actor } from './types.js';
export { LinkRequired } from './user-links.js';

/**
 * Connector instances of a workspace, their credentials, tools and OAuth linking. Status
 * moves are exactly the table of docs/interface.md, States (docs/connectors.md); nothing else writes `status`.
 * Each concept lives in its own file; this composes them into one API.
 */
export function createConnectorsService(kernel: Kernel, deps: ConnectorsDeps) {
  const { db, config } = kernel;
  const definitions = createDefinitions(kernel);
  kernel.changes.subscribe(KEYRING_TOPIC, () => reloadKeyring(kernel));
  const ctx = createConnectorsContext(kernel, deps, definitions);
  const exposed = createExposedTools(ctx);
  const upstreams = createMcpSessions(kernel.clock, kernel.tracing);
  kernel.changes.subscribe(TOOLS_CHANGED_TOPIC, (workspaceId) => upstreams.retireWorkspace(workspaceId));
  const invoker = createInvoker(ctx, exposed, upstreams);
  const approvals = createApprovals(ctx, invoker);

  return {
    definitions,
    sealed: { columns: CONNECTOR_SEALED_COLUMNS } satisfies SealedValues,
    tools: {
      ...createToolCatalog(ctx),
      listExposed: exposed.listExposed,
      findExposed: exposed.findExposed,
      bindCalledName: exposed.bindCalledName,
      onToolsChanged: exposed.onToolsChanged,
      invoke: invoker.invoke,
      listApprovals: approvals.listApprovals,
      decide: approvals.decide,
    },
    /** MCP calls' approvals (docs/connectors.md, Approvals of MCP calls) and the approval page. */
    approvals: { ...createMcpApprovals(ctx), page: createApprovalReview(ctx, invoker, approvals) },
    oauth: { ...createOauthLinking(ctx), ...createTokenRefresh(ctx) },
    ...createInstances(ctx),
    ...createInstanceCredentials(ctx, deps.audit),
    ...createHealthCheck(ctx),

    /** Closes the upstream MCP sessions tool calls share (the server is stopping). */
    closeSessions: upstreams.closeAll,

    async listDefinitions(ws: WorkspaceContext) {
      return (await definitions.list(ws.workspaceId)).map(presentDefinition);
    },

    async createDefinition(actor: Actor, input: CustomDefinitionInput) {
      ctx.assertWriter(actor.ws);
      // Checked by the schema worker before the transaction, which never waits on it.
      await definitions.assertJsonSchema(input.configSchema ?? EMPTY_CONFIG_SCHEMA, 'configSchema');
      const def = await inTransaction(db, async (trx) => {
        const created = await definitions.createCustom(trx, actor.ws.workspaceId, input);
        await ctx.audit(trx, actor, 'connector.created', created.key, { definition: created.key });
        return created;
      });
      return presentDefinition(def);
    },

    /** `gantry connector define`: the operator's system OAuth definition, with the callback URL to register at the provider. */
    async defineSystem(input: SystemDefinitionInput) {
      await definitions.assertJsonSchema(input.configSchema ?? EMPTY_CONFIG_SCHEMA, 'configSchema');
      const def = await inTransaction(db, async (trx) => {
        const created = await definitions.defineSystem(trx, input);
        // Every workspace sees system definitions: all exposed catalogs are rebuilt.
        await kernel.changes.publish(trx, TOOLS_CHANGED_TOPIC, null);
        return created;
      });
      return { definition: presentDefinition(def), callbackUrl: callbackUrl(config.publicUrl, def.key) };
    },

    /** `gantry connector list`: the definitions every workspace sees (built-in and system). */
    async listSystemDefinitions() {
      return (await definitions.list(null)).map(presentDefinition);
    },
  };
}

export type ConnectorsService = ReturnType<typeof createConnectorsService>;
