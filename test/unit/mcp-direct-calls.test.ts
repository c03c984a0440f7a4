// A tool call on a shared upstream session goes without the SDK client's per-request machinery
// (src/connectors/mcp-calls.ts; docs/mcp.md, Performance). It must be the same call on the wire:
// the same headers and the same message as the SDK's client sends, for both eras, and the same
// answer and the same errors back.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { callsDirectly, callToolDirectly } from '../../src/connectors/mcp-calls.js';
import { callMcpTool, closeMcp, type McpSession, type McpTarget, openMcp } from '../../src/connectors/mcp.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTracing } from '../../src/lib/tracing.js';
import { tracingConfig } from '../../src/lib/tracing-config.js';
import { type McpFake, startLegacyMcpServer, startModernMcpServer } from '../helpers/mcp-servers.js';
import { startOtlpCollector, tracingEnv } from '../helpers/otlp-collector.js';

const tools = [{ name: 'echo', inputSchema: { type: 'object' } }];
/** Headers that name the connection, not the call. */
const TRANSPORT = new Set([
  'host',
  'connection',
  'content-length',
  'user-agent',
  'accept-encoding',
  'accept-language',
  'sec-fetch-mode',
]);

const callHeaders = (fake: McpFake, index: number) =>
  Object.fromEntries(Object.entries(fake.requests[index]!.headers).filter(([k]) => !TRANSPORT.has(k)));
/** The message without its id (each call numbers its own). */
const callMessage = (fake: McpFake, index: number) => {
  const { id: _id, ...rest } = fake.requests[index]!.body!;
  return rest;
};

for (const era of ['2026-07-28 (stateless)', '2025-11-25 (session)'] as const) {
  describe(`a tool call on a ${era} upstream`, () => {
    let fake: McpFake;
    let session: McpSession;
    let target: McpTarget;
    before(async () => {
      fake = era.startsWith('2026') ? await startModernMcpServer({ tools }) : await startLegacyMcpServer({ tools });
      target = {
        url: fake.url,
        headers: { authorization: 'Bearer upstream-token', 'x-team': 'blue' },
        allowPrivate: true,
      };
      session = await openMcp(target);
    });
    after(async () => {
      await closeMcp(session);
      await fake.close();
    });

    test('goes direct, with the headers and message the SDK client sends, and the same answer', async () => {
      assert.equal(callsDirectly(session, 'echo'), true);
      const bySdk = await callMcpTool(session, 'echo', { a: 1 });
      const sdkAt = fake.requests.length - 1;
      const direct = await callToolDirectly(session, target, 'echo', { a: 1 });
      const directAt = fake.requests.length - 1;
      assert.equal(fake.requests[sdkAt]!.method, 'tools/call');
      assert.equal(fake.requests[directAt]!.method, 'tools/call');
      assert.deepEqual(callHeaders(fake, directAt), callHeaders(fake, sdkAt));
      assert.equal(callHeaders(fake, directAt).authorization, 'Bearer upstream-token');
      assert.deepEqual(callMessage(fake, directAt), callMessage(fake, sdkAt));
      assert.deepEqual(direct, bySdk);
      assert.deepEqual(fake.calls.slice(-2), [
        { name: 'echo', args: { a: 1 } },
        { name: 'echo', args: { a: 1 } },
      ]);
    });

    test('a name the SDK would encode in Mcp-Name goes through the SDK client', () => {
      assert.equal(callsDirectly(session, 'naïve tool'), false);
      assert.equal(callsDirectly(session, 'x'.repeat(129)), false);
    });

    test("with traces on, both ways send the active span's traceparent in the headers and _meta alike", async () => {
      const collector = await startOtlpCollector();
      const tracing = await createTracing(tracingConfig(tracingEnv(collector)), createLogger('silent'));
      const traced = await openMcp(target, undefined, { tracing });
      try {
        const traceparent = await tracing.inSpan('tools/call echo', { kind: 'client' }, async () => {
          await callMcpTool(traced, 'echo', { a: 2 }, undefined, tracing);
          await callToolDirectly(traced, target, 'echo', { a: 2 }, undefined, tracing);
          return tracing.traceparent();
        });
        assert.match(String(traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
        const [sdkAt, directAt] = [fake.requests.length - 2, fake.requests.length - 1];
        assert.deepEqual(callHeaders(fake, directAt), callHeaders(fake, sdkAt));
        assert.deepEqual(callMessage(fake, directAt), callMessage(fake, sdkAt));
        assert.equal(callHeaders(fake, directAt).traceparent, traceparent);
        const params = callMessage(fake, directAt).params as { _meta?: Record<string, unknown> };
        assert.equal(params._meta?.traceparent, traceparent);
      } finally {
        await closeMcp(traced);
        await tracing.shutdown();
        await collector.close();
      }
    });

    test("the upstream's refusal is the same error either way", async () => {
      const bySdk = await callMcpTool(session, 'missing', {}).then(
        (r) => ({ result: r }),
        (e: Error) => ({ name: e.constructor.name, message: e.message, code: (e as { code?: unknown }).code }),
      );
      const direct = await callToolDirectly(session, target, 'missing', {}).then(
        (r) => ({ result: r }),
        (e: Error) => ({ name: e.constructor.name, message: e.message, code: (e as { code?: unknown }).code }),
      );
      assert.deepEqual(direct, bySdk);
    });
  });
}

test('an upstream that refuses the token: the same HTTP error class and status as the SDK client', async () => {
  const fake = await startLegacyMcpServer({ tools });
  const target: McpTarget = { url: fake.url, headers: {}, allowPrivate: true };
  const session = await openMcp(target);
  try {
    fake.dropSessions!();
    const shape = (e: Error) => ({ name: e.constructor.name, status: (e as { status?: number }).status });
    const bySdk = await callMcpTool(session, 'echo', {}).then(() => null, shape);
    const direct = await callToolDirectly(session, target, 'echo', {}).then(() => null, shape);
    assert.notEqual(direct, null);
    assert.deepEqual(direct, bySdk);
  } finally {
    await closeMcp(session).catch(() => undefined);
    await fake.close();
  }
});
