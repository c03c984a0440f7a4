import type { Kernel } from '../kernel.js';
import type { Executor } from '../db/tx.js';
import { toBool } from '../db/tx.js';
import { isUniqueViolation } from '../db/engine.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import { open, seal } from '../lib/sealed.js';
import { builtinDefinitions, EMPTY_CONFIG_SCHEMA } from './builtins.js';
import { createJsonSchemaEngine } from './json-schema/engine.js';
import { clientSecretContext } from './sealing.js';
import { definitionStore } from './store/index.js';
import type { ConnectorDefinitionsTable } from './tables.js';
import type { CredType, CustomDefinitionInput, Definition, SystemDefinitionInput } from './types.js';

const KEY_PATTERN = /^[a-z0-9][a-z0-9_-]{1,62}$/;

/** What is wrong with a connector key, or null (also the CLI prompt's check). */
export const keyProblem = (key: string): string | null =>
  KEY_PATTERN.test(key) ? null : 'key must be 2-63 lowercase letters, digits, - or _';

/** What is wrong with a system definition's endpoint URL, or null (also the CLI prompt's check). */
export const httpUrlProblem = (url: string): string | null =>
  /^https?:\/\//.test(url) ? null : 'must be an http(s) URL';

/** The catalog, JSON Schema validation of configs and tool schemas (json-schema/). */
export function createDefinitions(kernel: Kernel) {
  const { db, clock } = kernel;
  const schemas = createJsonSchemaEngine({ logger: kernel.logger });
  kernel.onClose(() => schemas.close());

  /** Proves a value is a JSON Schema Gantry evaluates (size, meta-schema, RE2 patterns, compile). */
  function assertJsonSchema(schema: unknown, field: string): Promise<void> {
    return schemas.assertSchema(schema, field);
  }

  /**
   * Validates a value against a schema (an object, or its JSON as stored); failures list every
   * failing path in error.details.
   */
  function assertValid(schema: string | Record<string, unknown>, value: unknown, root: string, what: string) {
    return schemas.assertValid(schema, value, root, what);
  }

  function fromRow(row: ConnectorDefinitionsTable): Definition {
    const oauth = row.auth_kind === 'oauth2';
    return {
      key: row.key,
      name: row.name,
      description: row.description,
      authKind: row.auth_kind as Definition['authKind'],
      credType: row.cred_type as CredType | null,
      adapter: row.adapter as Definition['adapter'],
      oauth: oauth
        ? {
            authorizeUrl: row.authorize_url,
            tokenUrl: row.token_url,
            checkUrl: row.check_url,
            clientId: row.client_id,
            clientSecret: row.client_secret_sealed
              ? open(kernel.secrets, row.client_secret_sealed, clientSecretContext(row.key))
              : null,
            scopes: JSON.parse(row.scopes) as string[],
            pkce: toBool(row.pkce),
          }
        : null,
      configSchema: JSON.parse(row.config_schema) as Record<string, unknown>,
      isSystem: toBool(row.is_system),
      workspaceId: row.workspace_id,
    };
  }

  /**
   * A definition visible from a workspace: built-ins, then the workspace's own custom one,
   * then the operator's system one. Keys are unique per workspace (custom) and among system
   * definitions; a workspace that defined a key before the operator did keeps its own there.
   */
  async function get(key: string, workspaceId: string | null): Promise<Definition | null> {
    const builtin = builtinDefinitions(kernel).find((d) => d.key === key);
    if (builtin) return builtin;
    const row = await definitionStore.find(db, key, workspaceId);
    return row ? fromRow(row) : null;
  }

  async function list(workspaceId: string | null): Promise<Definition[]> {
    const rows = await definitionStore.list(db, workspaceId);
    const own = new Set(rows.filter((r) => !toBool(r.is_system)).map((r) => r.key));
    return [...builtinDefinitions(kernel), ...rows.filter((r) => !toBool(r.is_system) || !own.has(r.key)).map(fromRow)];
  }

  /**
   * A key is taken by a built-in or a system definition (both public), or, for a custom one,
   * by the same workspace's: another tenant's keys are never consulted, so a 409 tells
   * nothing about them, and no tenant can block the operator's `gantry connector define`.
   */
  async function assertKeyFree(executor: Executor, key: string, workspaceId: string | null): Promise<void> {
    const problem = keyProblem(key);
    if (problem) throw badRequest(problem, [{ field: 'key', message: 'invalid key', type: 'string.pattern' }]);
    if (builtinDefinitions(kernel).some((d) => d.key === key)) throw conflict(`${key} is a built-in connector`);
    const system = await definitionStore.findSystem(executor, key);
    if (system)
      throw conflict(
        workspaceId ? `${key} is a system connector` : `A connector definition with key ${key} already exists`,
      );
    if (!workspaceId) return;
    const own = await definitionStore.findCustom(executor, key, workspaceId);
    if (own) throw conflict(`A connector definition with key ${key} already exists`);
  }

  /** The unique indexes back assertKeyFree against two concurrent creations of one key. */
  async function insertDefinition(executor: Executor, row: ConnectorDefinitionsTable): Promise<void> {
    try {
      await definitionStore.insert(executor, row);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A connector definition with key ${row.key} already exists`);
      throw err;
    }
  }

  return {
    get,
    list,
    assertJsonSchema,
    assertValid,
    schemas,

    async require(key: string, workspaceId: string): Promise<Definition> {
      const def = await get(key, workspaceId);
      if (!def) throw notFound(`Connector definition ${key}`);
      return def;
    },

    /** `gantry connector define`: a system OAuth definition for an external provider. */
    async defineSystem(executor: Executor, input: SystemDefinitionInput): Promise<Definition> {
      await assertKeyFree(executor, input.key, null);
      const schema = input.configSchema ?? EMPTY_CONFIG_SCHEMA;
      for (const [field, url] of [
        ['authorizeUrl', input.authorizeUrl],
        ['tokenUrl', input.tokenUrl],
        ['checkUrl', input.checkUrl],
      ] as const) {
        const problem = url ? httpUrlProblem(url) : null;
        if (problem) throw badRequest(`${field} ${problem}`, [{ field, message: problem, type: 'string.uri' }]);
      }
      const now = clock.now().toISOString();
      const row: ConnectorDefinitionsTable = {
        id: newId(),
        key: input.key,
        name: input.name,
        description: null,
        auth_kind: 'oauth2',
        cred_type: 'oauth2',
        adapter: 'none',
        authorize_url: input.authorizeUrl,
        token_url: input.tokenUrl,
        check_url: input.checkUrl ?? null,
        client_id: input.clientId,
        client_secret_sealed: seal(kernel.secrets, input.clientSecret, clientSecretContext(input.key)),
        scopes: JSON.stringify(input.scopes),
        pkce: input.pkce ? 1 : 0,
        config_schema: JSON.stringify(schema),
        is_system: 1,
        workspace_id: null,
        created_at: now,
        updated_at: now,
      };
      await insertDefinition(executor, row);
      return fromRow(row);
    },

    /** POST /connectors/definitions: a custom definition of one workspace (manual tools). */
    async createCustom(executor: Executor, workspaceId: string, input: CustomDefinitionInput): Promise<Definition> {
      await assertKeyFree(executor, input.key, workspaceId);
      const schema = input.configSchema ?? EMPTY_CONFIG_SCHEMA;
      const now = clock.now().toISOString();
      const row: ConnectorDefinitionsTable = {
        id: newId(),
        key: input.key,
        name: input.name,
        description: input.description ?? null,
        auth_kind: input.credType ? 'credentials' : 'none',
        cred_type: input.credType ?? null,
        adapter: 'none',
        authorize_url: null,
        token_url: null,
        check_url: null,
        client_id: null,
        client_secret_sealed: null,
        scopes: '[]',
        pkce: 0,
        config_schema: JSON.stringify(schema),
        is_system: 0,
        workspace_id: workspaceId,
        created_at: now,
        updated_at: now,
      };
      await insertDefinition(executor, row);
      return fromRow(row);
    },
  };
}

export type Definitions = ReturnType<typeof createDefinitions>;
