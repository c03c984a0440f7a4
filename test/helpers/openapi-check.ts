import { AssertionError } from 'node:assert';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Stream } from 'node:stream';
import type { Request, ResponseObject, Server } from '@hapi/hapi';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, any>;
type Injected = Awaited<ReturnType<Server['inject']>>;

const DOCUMENT_ID = 'https://gantry.invalid/openapi.json';
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

/** A JSON pointer segment, in a URI fragment. */
const segment = (value: string) => encodeURIComponent(value.replace(/~/g, '~0').replace(/\//g, '~1'));
const openApiPath = (path: string) => path.replace(/\{(\w+)[*?]\d*\}/g, '{$1}');

/** The document the server built at start (src/http/openapi/route.ts keeps it there). */
export function documentOf(server: Server): Json {
  const document = (server.app as { openapi?: Json }).openapi;
  if (!document) throw new Error('The server has no OpenAPI document: createServer() builds it (src/http/server.ts)');
  return document;
}

/** One answer as the checker reads it: the request (its route), status, content type, body (unless streamed). */
interface Answer {
  request: Request;
  statusCode: number;
  contentType: string;
  /** The body as sent; undefined for a stream (only its status and type are checked). */
  payload: string | undefined;
}

/**
 * Checks answers of a test app against the OpenAPI document (docs/openapi.md): the status must
 * be one the route declares, its content type a declared one, and a JSON body must match its
 * schema (success bodies and error envelopes with their codes alike). Throws an AssertionError
 * naming the route, the status and what differs.
 */
function checkerOf(server: Server, document: Json = documentOf(server)): Check {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, DOCUMENT_ID);
  const validators = new Map<string, ValidateFunction>();
  const validatorOf = (pointer: string) => {
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      validators.set(pointer, validate);
    }
    return validate;
  };

  return ({ request, statusCode, contentType, payload }) => {
    const route = request.route;
    // hapi's own 404 for unknown paths, and routes a test adds after the start, are no route of the document.
    if ((route.method as string) === '_special') return;
    const path = openApiPath(route.path);
    const operations = document.paths[path] as Json | undefined;
    if (!operations) return;
    const requestMethod = request.method.toLowerCase();
    const method = requestMethod === 'head' ? 'get' : requestMethod;
    const operation = operations[method] as Json | undefined;
    const where = `${requestMethod.toUpperCase()} ${route.path} (${route.settings.id ?? 'no id'})`;
    const fail = (message: string) => {
      throw new AssertionError({
        message: `${where} answered ${statusCode}: ${message} (docs/openapi.md)\nbody: ${(payload ?? '(a stream)').slice(0, 600)}`,
      });
    };
    if (!operation) {
      if (statusCode === 405) return;
      return fail(`the document has no ${method} operation for this path`);
    }
    const status = String(statusCode);
    const declared = (operation.responses[status] ?? operation.responses.default) as Json | undefined;
    if (!declared)
      return fail(
        `status ${status} is not in the document; declare it in the route's plugins.gantry.responses (a success) or errors (an error code)`,
      );
    if (payload === '' || requestMethod === 'head') return;
    const type = contentType.split(';')[0];
    const content = declared.content as Json | undefined;
    if (!content) return fail(`the document declares no body for ${status}, but one came (${type})`);
    if (!content[type]) return fail(`content type ${type} is not the documented ${Object.keys(content).join(', ')}`);
    if (!type.includes('json') || payload === undefined) return;
    const pointer = `/paths/${segment(path)}/${method}/responses/${status}/content/${segment(type)}/schema`;
    const validate = validatorOf(pointer);
    if (!validate(JSON.parse(payload)))
      fail(
        `the body does not match the documented schema:\n${(validate.errors ?? [])
          .map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`)
          .join('\n')}`,
      );
  };
}

type Check = (answer: Answer) => void;

const injected = (res: Injected): Answer => ({
  request: res.request,
  statusCode: res.statusCode,
  contentType: String(res.headers['content-type'] ?? ''),
  payload: res.payload,
});

/** Checks one inject() answer; the test that made the request fails on a mismatch. */
export function answerChecker(server: Server): (res: Injected) => void {
  const check = checkerOf(server);
  return (res) => check(injected(res));
}

/** A response's body as hapi sends it: a string, JSON of a value, or undefined for a stream or buffer. */
function sentBody(source: unknown): string | undefined {
  if (source === null || source === undefined) return '';
  if (typeof source === 'string') return source;
  if (source instanceof Stream || Buffer.isBuffer(source)) return undefined;
  return JSON.stringify(source);
}

/** Checks each answer sent over the real listener with `check`, keeping the mismatches. */
function watchListener(server: Server, check: Check): { failures(): string[] } {
  const failures: string[] = [];
  server.events.on('response', (request) => {
    if ((request as unknown as { isInjected: boolean }).isInjected) return;
    const response = request.response as ResponseObject | null;
    if (!response || (response as unknown as { isBoom?: boolean }).isBoom) return;
    try {
      check({
        request,
        statusCode: response.statusCode,
        contentType: String(
          response.headers['content-type'] ?? (response as unknown as { contentType: string | null }).contentType ?? '',
        ),
        payload: sentBody(response.source),
      });
    } catch (error) {
      failures.push((error as Error).message);
    }
  });
  return { failures: () => failures };
}

/**
 * Checks the answers the server sends over its real listener (the MCP clients, event streams):
 * they are not inject()'s, so nothing awaits them; mismatches are kept, and `failures()` says
 * them when the test app closes (its after hook fails).
 */
export function listenerChecker(server: Server): { failures(): string[] } {
  return watchListener(server, checkerOf(server));
}

/**
 * The key of an app's document: its routes and `configuration`, less what only places it (its
 * data directory and database). Apps with the same key have the same document.
 */
function documentKey(server: Server, configuration: Json): string {
  const { dataDir, dbFile, databaseUrl, ...rest } = configuration;
  const routes = server
    .table()
    .map((route) => `${route.method} ${route.path} ${route.settings.id ?? ''}`)
    .sort();
  return createHash('sha256')
    .update(JSON.stringify([routes, rest]))
    .digest('hex')
    .slice(0, 32);
}

/**
 * The document of `server`, built once per run for each configuration: test/run.mjs names a
 * directory in GANTRY_TEST_OPENAPI_CACHE, where the first test process to need a document writes
 * it. Building it (joi's description of every route's schemas) costs each test process about
 * 0.3 s of CPU, and it is the same for every app with the same routes and configuration: the
 * code is the run's build. Without the variable (a file run on its own) it is built here.
 */
function sharedDocument(server: Server, key: string): Json {
  const dir = process.env.GANTRY_TEST_OPENAPI_CACHE;
  if (!dir) return documentOf(server);
  const file = path.join(dir, `${key}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Json;
  } catch {
    // Not written yet: built here, and written whole (a rename) for the processes after.
  }
  const document = documentOf(server);
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${file}.${process.pid}`, JSON.stringify(document));
  renameSync(`${file}.${process.pid}`, file);
  return document;
}

/**
 * The checkers of this process, one per document: the apps of the test files that share a
 * process (test/run.mjs) compile each validator once.
 */
const checkers = new Map<string, Check>();

/**
 * A test app's checks (test/helpers/app.ts): inject()'s answers at once, the listener's kept for
 * close(). Both share one checker, made at the app's first answer from the document of its
 * routes and `configuration` (sharedDocument), or taken from an earlier app with the same
 * document: its validators are compiled once per process, and an app that answers nothing (a
 * CLI test's) neither builds the document nor compiles them (docs/postgres.md, Test run times).
 */
export function appChecks(server: Server, configuration: Json): { inject(res: Injected): void; failures(): string[] } {
  let checker: Check | null = null;
  const checkerOfApp = () => {
    const key = documentKey(server, configuration);
    let shared = checkers.get(key);
    if (!shared) {
      shared = checkerOf(server, sharedDocument(server, key));
      checkers.set(key, shared);
    }
    return shared;
  };
  const check: Check = (answer) => (checker ??= checkerOfApp())(answer);
  const listened = watchListener(server, check);
  return { inject: (res) => check(injected(res)), failures: listened.failures };
}
