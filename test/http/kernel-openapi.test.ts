import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { compileErrors, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveConfig } from '../../src/config.js';
import { createAppContext, createAppServer } from '../../src/app.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { answerChecker, documentOf, listenerChecker } from '../helpers/openapi-check.js';
import { bearer, signedInUser } from '../helpers/factories.js';

type Json = Record<string, any>;
const openApiPath = (path: string) => path.replace(/\{(\w+)[*?]\d*\}/g, '{$1}');
const methodsOf = (method: string) => (method === '*' ? ['get', 'post', 'delete'] : [method]);

/**
 * @readme/openapi-parser's validate(): the OpenAPI 3.1 schema and the rules the schema cannot say
 * (each templated path parameter declared and required, unique operationIds...), all errors by
 * default; it dereferences every $ref on the way. Fails with the validator's own messages.
 */
async function assertValidForReadme(document: Json): Promise<void> {
  const result = await validate(structuredClone(document) as Parameters<typeof validate>[0]);
  assert.equal(result.valid, true, result.valid ? '' : compileErrors(result));
  assert.deepEqual(result.warnings, [], compileErrors(result));
}

describe('OpenAPI document (docs/openapi.md)', () => {
  let t: TestApp;
  let doc: Json;

  before(async () => {
    t = await createTestApp();
    doc = documentOf(t.server);
  });
  after(() => t.close());

  it('is served anonymously at /api/v1/openapi.json with an ETag, and 304 when unchanged', async () => {
    const res = await t.inject('/api/v1/openapi.json');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const served = JSON.parse(res.payload) as Json;
    assert.equal(served.openapi, '3.1.0');
    assert.deepEqual(served, JSON.parse(JSON.stringify(doc)));
    const etag = res.headers.etag as string;
    assert.match(etag, /^"[0-9a-f]{32}"$/);
    const again = await t.inject({ url: '/api/v1/openapi.json', headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.payload, '');
  });

  it('is a valid OpenAPI 3.1 document (the official schema, through @seriousme/openapi-schema-validator)', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(doc.openapi, '3.1.0');
  });

  it('passes a second validator, @readme/openapi-parser, with every rule an error and no warning', async () => {
    await assertValidForReadme(doc);
  });

  it('declares every parameter of every templated path, in the path and required, pages included', () => {
    const undeclared: string[] = [];
    for (const route of t.server.table()) {
      const names = [...route.path.matchAll(/\{(\w+)[*?]?\d*\}/g)].map((m) => m[1]);
      for (const method of methodsOf(route.method)) {
        const operation = doc.paths[openApiPath(route.path)]?.[method] as Json | undefined;
        const declared = ((operation?.parameters ?? []) as Json[]).filter((p) => p.in === 'path' && p.required);
        for (const name of names)
          if (!declared.some((p) => p.name === name)) undeclared.push(`${method.toUpperCase()} ${route.path}: ${name}`);
      }
    }
    assert.deepEqual(undeclared, [], `Path parameters missing from the document:\n${undeclared.join('\n')}`);
    // A page that reads its parameter itself (no validate.params): any string, from the template.
    for (const [path, name] of [
      ['/approvals/{approvalId}', 'approvalId'],
      ['/connectors/link/{hold}', 'hold'],
    ])
      for (const method of ['get', 'post'])
        assert.deepEqual(doc.paths[path][method].parameters, [
          { name, in: 'path', required: true, schema: { type: 'string' } },
        ]);
    // A validated one keeps its joi schema.
    assert.deepEqual(doc.paths['/api/v1/status/snapshots/{date}'].get.parameters, [
      { name: 'date', in: 'path', required: true, schema: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } },
    ]);
  });

  it('has schemas that compile as JSON Schema 2020-12 (the dialect of OpenAPI 3.1)', () => {
    const ajv = new Ajv2020({ strict: false });
    (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(doc, 'https://gantry.invalid/openapi.json');
    const schemas: Array<{ where: string; ref: string }> = [];
    for (const [path, operations] of Object.entries(doc.paths as Json)) {
      for (const [method, operation] of Object.entries(operations as Json)) {
        for (const [status, response] of Object.entries(operation.responses as Json)) {
          for (const type of Object.keys((response as Json).content ?? {})) {
            const pointer = ['paths', path, method, 'responses', status, 'content', type, 'schema']
              .map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1')))
              .join('/');
            schemas.push({
              where: `${method} ${path} ${status} ${type}`,
              ref: `https://gantry.invalid/openapi.json#/${pointer}`,
            });
          }
        }
      }
    }
    assert.ok(schemas.length > 100, `only ${schemas.length} response schemas`);
    // All in one schema, so what they share compiles once; on a failure, each alone names the culprit.
    try {
      ajv.compile({ anyOf: schemas.map(({ ref }) => ({ $ref: ref })) });
    } catch {
      for (const { where, ref } of schemas)
        assert.doesNotThrow(
          () =>
            new Ajv2020({ strict: false }).addSchema(doc, 'https://gantry.invalid/openapi.json').compile({ $ref: ref }),
          where,
        );
      assert.fail('the response schemas compile one by one but not together');
    }
  });

  it('covers every registered route, and every route declares what it answers', () => {
    const missing: string[] = [];
    const undeclared: string[] = [];
    for (const route of t.server.table()) {
      const name = `${route.method.toUpperCase()} ${route.path} (${route.settings.id ?? 'no id'})`;
      const operations = doc.paths[openApiPath(route.path)] as Json | undefined;
      for (const method of methodsOf(route.method)) {
        if (!operations?.[method]) missing.push(`${name}: no ${method} operation`);
      }
      const config = (route.settings.plugins as Json | undefined)?.gantry as Json | undefined;
      if (!config?.responses) undeclared.push(name);
    }
    assert.deepEqual(missing, [], `Routes missing from the document:\n${missing.join('\n')}`);
    assert.deepEqual(
      undeclared,
      [],
      `Routes that declare no response: add plugins.gantry.responses to each (ok(schema), created(schema), ` +
        `offsetList(item), jsonBody(...), htmlPage(...) from src/http/openapi/declare.ts; docs/openapi.md):\n` +
        undeclared.join('\n'),
    );
    assert.ok(t.server.table().length > 100, 'the whole route table is there');
  });

  it('states each route’s auth: anonymous, bearer with scopes, API keys, MCP tokens, optional', () => {
    const op = (path: string, method: string) => doc.paths[path][method] as Json;
    assert.deepEqual(op('/api/v1/status', 'get').security, []);
    assert.deepEqual(op('/api/v1/wallet/me', 'get').security, [{ session: [] }, { oauth2: ['wallet:read'] }]);
    assert.deepEqual(op('/api/v1/accounts/me', 'get').security, [{ session: [] }, { apiKey: [] }]);
    assert.deepEqual(op('/api/v1/notifications', 'get').security, [{ session: [] }]);
    assert.deepEqual(op('/api/v1/mcp', 'post').security, [{ mcp: [] }]);
    assert.deepEqual(op('/api/v1/auth/check-username', 'get').security, [{ session: [] }, {}]);
    const schemes = doc.components.securitySchemes as Json;
    assert.deepEqual(Object.keys(schemes).sort(), ['apiKey', 'mcp', 'oauth2', 'session']);
    assert.ok(schemes.oauth2.flows.authorizationCode.scopes['wallet:read']);
  });

  it('lists the error codes by status, the rate limit as x-rateLimit, and pagination in meta', () => {
    const read = doc.paths['/api/v1/notifications/{id}/read'].patch as Json;
    const codes = (status: string) =>
      (read.responses[status].content['application/json'].schema.allOf[1].properties.error.properties.code
        .enum as string[]) ?? [];
    assert.deepEqual(codes('401'), ['UNAUTHORIZED']);
    assert.deepEqual(codes('403'), ['FORBIDDEN', 'INSUFFICIENT_SCOPE']);
    assert.deepEqual(codes('404'), ['NOT_FOUND']);
    assert.deepEqual(codes('422'), ['VALIDATION_FAILED']);
    assert.deepEqual(codes('429'), ['RATE_LIMIT_EXCEEDED']);
    assert.deepEqual(codes('500'), ['INTERNAL']);
    // Kernel-wide: any route may meet a value sealed with a key this node lacks.
    assert.deepEqual(codes('503'), ['NOT_CONFIGURED']);
    assert.deepEqual(read['x-rateLimit'], {
      limit: 30,
      windowSeconds: 60,
      per: 'user, or client address when anonymous',
    });
    assert.equal(doc.paths['/healthz'].get['x-rateLimit'], false);
    assert.equal(doc.paths['/api/v1/auth/login'].post['x-rateLimit'].limit, 8);
    assert.equal(doc.paths['/api/v1/connectors/instances'].get['x-rateLimit'].limit, 120);

    const list = doc.paths['/api/v1/connectors/instances'].get as Json;
    const meta = list.responses['200'].content['application/json'].schema.properties.meta;
    assert.deepEqual(meta.required, ['requestId', 'durationMs', 'total', 'limit', 'offset', 'hasNextPage']);
    const limit = (list.parameters as Json[]).find((p) => p.name === 'limit');
    assert.equal(limit?.in, 'query');
    assert.equal(limit?.schema.maximum, 100);
  });

  it('marks what is not the envelope: RFC bodies, pages, streams, redirects', () => {
    const token = doc.paths['/api/v1/oauth/token'].post as Json;
    assert.ok(token.requestBody.content['application/x-www-form-urlencoded']);
    assert.deepEqual(token.responses['200'].content['application/json'].schema.required, [
      'access_token',
      'token_type',
      'expires_in',
      'scope',
    ]);
    // An ID-JAG's answer has no refresh token (docs/identity-providers.md): documented, not required.
    assert.ok(token.responses['200'].content['application/json'].schema.properties.refresh_token);
    assert.ok(token.responses['401'].content['application/json'].schema.properties.error);
    assert.ok(doc.paths['/status'].get.responses['200'].content['text/html']);
    assert.ok(doc.paths['/status/feed.atom'].get.responses['200'].content['application/atom+xml']);
    assert.ok(doc.paths['/api/v1/notifications/stream'].get.responses['200'].content['text/event-stream']);
    assert.ok(doc.paths['/api/v1/connectors/oauth/{connectorKey}/callback'].get.responses['302'].headers.Location);
    assert.ok(doc.paths['/oauth/authorize'] === undefined, 'the authorize page lives under /api/v1');
    assert.ok(doc.paths['/api/v1/oauth/authorize'].get.responses['200'].content['text/html']);
  });

  it('fails an answer whose body or status the document does not allow, naming the route', async () => {
    const check = answerChecker(t.server);
    const { token } = await signedInUser(t.app);
    const res = await t.server.inject({ url: '/api/v1/notifications/unread-count', headers: bearer(token) });
    assert.doesNotThrow(() => check(res));
    const body = JSON.parse(res.payload) as Json;

    const leaked = Object.assign(Object.create(Object.getPrototypeOf(res)), res, {
      payload: JSON.stringify({ ...body, data: { ...body.data, ownerId: 'u1' } }),
    });
    assert.throws(
      () => check(leaked),
      /GET \/api\/v1\/notifications\/unread-count \(notifications.unread-count\) answered 200: the body does not match the documented schema:\n\/data must NOT have additional properties \{"additionalProperty":"ownerId"\}/,
    );
    const wrongType = Object.assign(Object.create(Object.getPrototypeOf(res)), res, {
      payload: JSON.stringify({ ...body, data: { count: 'three' } }),
    });
    assert.throws(() => check(wrongType), /\/data\/count must be integer/);
    const teapot = Object.assign(Object.create(Object.getPrototypeOf(res)), res, { statusCode: 418 });
    assert.throws(() => check(teapot), /answered 418: status 418 is not in the document/);

    // An error whose code the route does not list for that status.
    const denied = await t.server.inject('/api/v1/notifications/unread-count');
    assert.doesNotThrow(() => check(denied));
    const oddCode = Object.assign(Object.create(Object.getPrototypeOf(denied)), denied, {
      payload: denied.payload.replace('"UNAUTHORIZED"', '"CONFLICT"'),
    });
    assert.throws(() => check(oddCode), /must be equal to one of the allowed values/);
  });

  it('checks the answers of the real listener too, and says the mismatches when the app closes', async () => {
    const own = await createTestApp();
    try {
      await own.server.start();
      const url = `${own.server.info.uri}/api/v1/notifications/unread-count`;
      // The same server with a document that does not allow its 401: the mismatch is kept.
      const document = documentOf(own.server);
      const narrowed = structuredClone(document);
      delete narrowed.paths['/api/v1/notifications/unread-count'].get.responses['401'];
      (own.server.app as { openapi?: unknown }).openapi = narrowed;
      const strict = listenerChecker(own.server);
      (own.server.app as { openapi?: unknown }).openapi = document;
      const { token } = await signedInUser(own.app);
      assert.equal((await fetch(url, { headers: bearer(token) })).status, 200);
      assert.equal((await fetch(url)).status, 401);
      // hapi emits 'response' once the answer is sent, which may be just after the client has it.
      for (let i = 0; i < 100 && strict.failures().length === 0; i++) await delay(10);
      assert.equal(strict.failures().length, 1);
      assert.match(
        strict.failures()[0],
        /GET \/api\/v1\/notifications\/unread-count \(notifications.unread-count\) answered 401: status 401 is not in the document/,
      );
    } finally {
      await own.close();
    }
  });

  it('is kept, not served, by the status-only listener', async () => {
    const status = await createTestApp({ statusOnly: true });
    try {
      const own = documentOf(status.server);
      assert.ok(own.paths['/api/v1/status']);
      await assertValidForReadme(own);
      assert.equal(own.paths['/api/v1/accounts/me'], undefined);
      const res = await status.inject('/api/v1/openapi.json');
      assert.equal(res.statusCode, 404);
    } finally {
      await status.close();
    }
  });

  it('is built on its first request, from the routes registered at start, the same document every time', async () => {
    // A server as `serve` makes it: nothing reads the document before the first request.
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-test-'));
    const app = await createAppContext(resolveConfig({ dataDir }, TEST_ENV));
    const server = await createAppServer(app);
    try {
      await server.initialize();
      // A route added after the start is no route of the document (the table is taken at start).
      server.route({ method: 'GET', path: '/api/v1/added-later', options: { auth: false }, handler: () => 'late' });
      const first = await server.inject('/api/v1/openapi.json');
      assert.equal(first.statusCode, 200);
      const served = JSON.parse(first.payload) as Json;
      assert.equal(served.paths['/api/v1/added-later'], undefined);
      assert.ok(served.paths['/api/v1/openapi.json'].get);
      // The same document as the eagerly read one of the test app (same routes, same options).
      assert.deepEqual(served, JSON.parse(JSON.stringify(doc)));
      assert.deepEqual(documentOf(server), served);
      const again = await server.inject('/api/v1/openapi.json');
      assert.equal(again.payload, first.payload);
      assert.equal(again.headers.etag, first.headers.etag);
    } finally {
      await server.stop();
      await app.kernel.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
