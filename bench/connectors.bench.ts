// Connectors benchmark: MCP tool sync of 1,000 tools (time, SQL statements) and the OAuth
// refresh job over 10,000 credentials of which 1,000 are due (time; only those touched).
// Loopback only; bounded; run with `node --import tsx bench/connectors.bench.ts`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveConfig } from '../src/config.js';
import { createAppContext } from '../src/app.js';
import { ManualClock } from '../src/lib/clock.js';
import { createLogger } from '../src/lib/logger.js';
import { newId } from '../src/lib/ids.js';
import { sealCredentials } from '../src/connectors/credentials.js';
import { rawSqlite, TEST_ENV } from '../test/helpers/app.js';
import { makeTeam } from '../test/helpers/factories.js';
import { startLegacyMcpServer, startModernMcpServer } from '../test/helpers/mcp-servers.js';
import { providerEnv, startFakeProvider } from '../test/helpers/oauth-provider.js';
import { userPrincipal } from '../src/http/auth.js';

const deadline = setTimeout(() => {
  console.error('connectors bench: over 90 s, giving up');
  process.exit(1);
}, 90_000);
deadline.unref();

const provider = await startFakeProvider();
const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-bench-connectors-'));
const env = { ...TEST_ENV, ...providerEnv(provider.base) };
const clock = new ManualClock('2026-06-01T00:00:00Z');
const app = await createAppContext(resolveConfig({ dataDir }, env), { clock, logger: createLogger('silent'), env });
const { kernel } = app;

// Count every SQL statement executed on the one connection (statements are prepared once and
// reused, so the count is taken where they run, not where they are prepared).
let statements = 0;
const statementProto = Object.getPrototypeOf(rawSqlite(kernel).prepare('select 1')) as Record<
  'run' | 'all' | 'get' | 'iterate',
  (...args: unknown[]) => unknown
>;
for (const method of ['run', 'all', 'get', 'iterate'] as const) {
  const original = statementProto[method];
  statementProto[method] = function (this: unknown, ...args: unknown[]) {
    statements++;
    return original.apply(this, args);
  };
}

const team = await makeTeam(app);
const ws = await app.services.accounts.access.workspace(userPrincipal(team.owner.user.id), {});
const actor = {
  principal: {
    userId: team.owner.user.id,
    kind: 'session' as const,
    scopes: null,
    clientId: null,
    sessionId: null,
    accountId: null,
    tokenId: null,
  },
  ws,
};

const tools = Array.from({ length: 1000 }, (_, i) => ({
  name: `tool_${i}`,
  description: `Tool number ${i}`,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
}));
for (const [era, start] of [
  ['2025-11-25', startLegacyMcpServer],
  ['2026-07-28', startModernMcpServer],
] as const) {
  const fake = await start({ tools: structuredClone(tools), pageSize: 100 });
  const inst = await app.services.connectors.create(actor, {
    connectorKey: 'mcp-generic',
    displayName: `bench ${era}`,
    config: { url: fake.url },
  });
  // The definitions pinned by the first sync (docs/connectors.md, Tool definitions): the second
  // finds them unchanged, the third finds every one changed and holds it for review.
  for (const label of ['first sync (1,000 new)', 'second sync (1,000 unchanged)', 'third sync (1,000 changed, held)']) {
    if (label.startsWith('third'))
      fake.options.tools = fake.options.tools.map((t) => ({ ...t, description: `${t.description}, changed` }));
    statements = 0;
    const t0 = performance.now();
    const out = await app.services.connectors.tools.sync(actor, inst.id);
    const ms = performance.now() - t0;
    console.log(
      `mcp sync ${era} ${label}: ${out.length} tools, ${ms.toFixed(0)} ms, ${statements} SQL statements, ${fake.requests.filter((r) => r.method === 'tools/list').length} tools/list pages so far`,
    );
  }
  await fake.close();
}

// 10,000 linked credentials; 1,000 expire within the next interval.
const github = 'github';
const now = clock.now();
const due = new Set<string>();
const seedStart = performance.now();
await kernel.db.transaction().execute(async (trx) => {
  for (let i = 0; i < 10_000; i++) {
    const id = newId();
    const refresh = `rt-seed-${i}`;
    provider.validRefresh.add(refresh);
    const isDue = i % 10 === 0;
    if (isDue) due.add(id);
    const at = now.toISOString();
    await trx
      .insertInto('connector_instances')
      .values({
        id,
        workspace_id: ws.workspaceId,
        connector_key: github,
        display_name: `gh ${i}`,
        credential_mode: 'shared',
        status: 'active',
        enabled: 1,
        config: '{}',
        last_health_check: null,
        health_message: null,
        created_by: team.owner.user.id,
        created_at: at,
        updated_at: at,
      })
      .execute();
    await trx
      .insertInto('connector_credentials')
      .values({
        id: newId(),
        instance_id: id,
        cred_type: 'oauth2',
        sealed_value: sealCredentials(kernel.secrets, id, 'oauth2', {
          access_token: `at-seed-${i}`,
          refresh_token: refresh,
        }),
        scopes: '["repo"]',
        expires_at: new Date(now.getTime() + (isDue ? 120_000 : 86_400_000)).toISOString(),
        refresh_claim: null,
        refresh_claimed_until: null,
        created_at: at,
        rotated_at: at,
      })
      .execute();
  }
});
console.log(`seeded 10,000 credentials in ${(performance.now() - seedStart).toFixed(0)} ms`);
clock.advance(1000);
statements = 0;
const t0 = performance.now();
const result = await app.services.connectors.oauth.refreshDue(clock.now(), 6 * 60_000);
const ms = performance.now() - t0;
const touched = await kernel.db
  .selectFrom('connector_credentials')
  .select(['instance_id', 'rotated_at'])
  .where('rotated_at', '!=', now.toISOString())
  .execute();
const onlyDue = touched.length === due.size && touched.every((r) => due.has(r.instance_id));
console.log(
  `refresh job: ${result.claimed} claimed, ${result.refreshed} refreshed, ${result.failed} failed of 10,000 in ${ms.toFixed(0)} ms (${(ms / Math.max(1, result.refreshed)).toFixed(2)} ms each), ${statements} SQL statements; rows touched ${touched.length}, only the due ones: ${onlyDue}`,
);

await kernel.close();
await provider.close();
rmSync(dataDir, { recursive: true, force: true });
clearTimeout(deadline);
