import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { badRequest, DomainError } from '../../http/errors.js';
import type { Logger } from '../../lib/logger.js';
import { createInProcessValidators } from './in-process.js';
import { schemaText, SchemaRefusal, type Detail } from './refusals.js';
import type { Outcome, ValidatorStats } from './validators.js';
import type { Answer, Job, JobRequest } from './worker.js';

/**
 * JSON Schema for connector configs and tool inputs (ajv 8 + ajv-formats), made safe for schemas
 * written by any user or by an upstream MCP server (docs/connectors.md, "JSON Schema"):
 * - every `pattern`, `patternProperties` key and format regex runs on RE2 (re2js), whose matching
 *   is linear in the input; a pattern's program is estimated from its syntax and bounded before
 *   it is compiled, and so is a validation's pattern work (pattern-cost.ts, ajv.ts);
 * - a schema's size, object count, depth and patterns are bounded (schema-checks.ts); a
 *   validated value is at most VALUE_MAX_BYTES;
 * - compiling and validating run in a worker thread (worker.ts) with a heap limit, and a job
 *   past JOB_TIME_LIMIT_MS ends the worker: however costly a schema the bounds still let
 *   through, the main thread keeps answering (docs/security.md, N-H1); only a small value
 *   against a small schema of linear keywords is validated here instead (in-process.ts);
 * - compiled validators live in the worker's bounded cache (validators.ts).
 */
const VALUE_MAX_BYTES = 256 * 1024;
/** The worst accepted schema compiles in about 0.5 s here; past this a job is stuck. */
const JOB_TIME_LIMIT_MS = 5_000;
/** Jobs waiting for the worker at once; more answer 429 until it catches up. */
const QUEUE_MAX = 1_000;
/** An idle worker ends (its validators with it) so that an idle server holds no second heap. */
const IDLE_MS = 60_000;
const WORKER_HEAP_MB = 256;

/** Set by build.mjs in the bundle: the worker's file beside it. */
declare const GANTRY_JSON_SCHEMA_WORKER: string | undefined;

/**
 * The worker's script: beside the bundle, or beside this module compiled. Run from the
 * TypeScript sources (under tsx: benchmarks, scripts), the worker first registers tsx's loader
 * itself, since Node 20 does not apply an `--import` hook to a worker's entry.
 */
function startWorker(options: ConstructorParameters<typeof Worker>[1]): Worker {
  if (typeof GANTRY_JSON_SCHEMA_WORKER === 'string')
    return new Worker(new URL(GANTRY_JSON_SCHEMA_WORKER, import.meta.url), options);
  const compiled = new URL('./worker.js', import.meta.url);
  if (existsSync(compiled)) return new Worker(compiled, options);
  const source = new URL('./worker.ts', import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source)}); });`,
    { ...options, eval: true },
  );
}

interface Pending {
  job: Job;
  resolve: (answer: Answer) => void;
}

export interface JsonSchemaEngineOptions {
  logger: Logger;
  /** The running job's time limit, read as each job starts (tests lower it to see a stuck job end the worker). */
  jobTimeLimitMs?: () => number;
}

/** The one JSON Schema engine of the connectors domain (configSchema, inputSchema, outputSchema). */
export function createJsonSchemaEngine(options: JsonSchemaEngineOptions) {
  const { logger } = options;
  const timeLimit = options.jobTimeLimitMs ?? (() => JOB_TIME_LIMIT_MS);
  let worker: Worker | null = null;
  let nextId = 1;
  // In the order sent, which is the order the worker runs them: the first is the one running.
  const pending = new Map<number, Pending>();
  let headTimer: NodeJS.Timeout | null = null;
  let idleTimer: NodeJS.Timeout | null = null;
  const local = createInProcessValidators();

  function start(): Worker {
    const w = startWorker({
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      stdout: false,
      stderr: false,
    });
    w.on('message', (answer: Answer) => {
      if (worker !== w) return;
      const entry = pending.get(answer.id);
      if (!entry) return;
      pending.delete(answer.id);
      entry.resolve(answer);
      settled();
    });
    w.on('error', (err: Error & { code?: string }) => {
      if (worker !== w) return;
      // A heap past its limit is what a too costly schema does; anything else is ours.
      const outOfMemory = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
      logger.warn('json schema worker failed', { error: outOfMemory ? err.code : (err.stack ?? err.message) });
      replace(outOfMemory ? { kind: 'too-costly' } : null);
    });
    w.on('exit', (code) => {
      if (worker !== w) return;
      logger.warn('json schema worker exited', { code });
      replace(null);
    });
    return w;
  }

  /** Ends the worker and fails the job it was running; the others run again on a new one. */
  function replace(outcome: Outcome | null) {
    const stuck = worker;
    worker = null;
    void stuck?.terminate();
    const [head] = pending.values();
    if (head) {
      pending.delete(head.job.id);
      head.resolve(outcome ? { id: head.job.id, outcome } : { id: head.job.id, failure: 'the schema worker stopped' });
    }
    const rest = [...pending.values()];
    if (rest.length > 0) {
      worker = start();
      for (const entry of rest) worker.postMessage(entry.job);
    }
    settled();
  }

  /** Re-arms the running job's time limit, and lets the process exit while nothing waits. */
  function settled() {
    if (headTimer) clearTimeout(headTimer);
    headTimer = null;
    const [head] = pending.values();
    if (head) {
      const limitMs = timeLimit();
      headTimer = setTimeout(() => {
        logger.warn('json schema job passed its time limit', { op: head.job.op, limitMs });
        replace({ kind: 'too-costly' });
      }, limitMs);
      worker?.ref();
      return;
    }
    worker?.unref();
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      if (pending.size > 0) return;
      const idle = worker;
      worker = null;
      void idle?.terminate();
    }, IDLE_MS);
    idleTimer.unref();
  }

  function run(job: JobRequest): Promise<Answer> {
    if (pending.size >= QUEUE_MAX)
      throw new DomainError(
        'RATE_LIMIT_EXCEEDED',
        'Too many schema checks are waiting; try again in a second',
        undefined,
        {
          'Retry-After': '1',
        },
      );
    const full: Job = { ...job, id: nextId++ };
    return new Promise<Answer>((resolve) => {
      const first = pending.size === 0;
      pending.set(full.id, { job: full, resolve });
      worker ??= start();
      worker.postMessage(full);
      if (first) settled();
    });
  }

  async function outcomeOf(job: JobRequest): Promise<Outcome> {
    const answer = await run(job);
    if ('outcome' in answer) return answer.outcome;
    throw new Error(`json schema worker: ${'failure' in answer ? answer.failure : 'unexpected answer'}`);
  }

  const located = (details: Detail[], field: string): Detail[] =>
    details.map((d) => ({ ...d, field: `${field}${d.field}` }));
  const tooCostly = (field: string) => [{ field, message: 'is too costly to check', type: 'jsonschema.cost' }];

  return {
    /** Refuses (400 VALIDATION_FAILED, details naming the schema paths) a schema Gantry will not evaluate. */
    async assertSchema(schema: unknown, field: string): Promise<void> {
      const json = schemaText(schema);
      if (json instanceof SchemaRefusal) throw badRequest(`${field} ${json.message}`, located(json.details, field));
      const outcome = await outcomeOf({ op: 'check', schema: json.text });
      if (outcome.kind === 'refused') throw badRequest(`${field} ${outcome.message}`, located(outcome.details, field));
      if (outcome.kind === 'too-costly') throw badRequest(`${field} is too costly to check`, tooCostly(field));
    },

    /**
     * Validates a value against a schema (an object, or its JSON as stored); failures list every
     * failing path in error.details. A value over VALUE_MAX_BYTES is refused unread. A stored
     * schema that is refused (an upstream tool's, synced as the server sent it) answers 409:
     * the call cannot be checked, so it is not made.
     */
    async assertValid(schema: string | Record<string, unknown>, value: unknown, root: string, what: string) {
      const tooDeep = () =>
        badRequest(`${what} is too deeply nested`, [
          { field: root, message: 'is too deeply nested', type: 'jsonschema.depth' },
        ]);
      let text: string;
      try {
        text = JSON.stringify(value) ?? 'null';
      } catch {
        throw tooDeep();
      }
      if (Buffer.byteLength(text) > VALUE_MAX_BYTES)
        throw badRequest(`${what} is larger than ${VALUE_MAX_BYTES / 1024} KiB`, [
          { field: root, message: `must be at most ${VALUE_MAX_BYTES} bytes as JSON`, type: 'jsonschema.size' },
        ]);
      const json = typeof schema === 'string' ? { text: schema } : schemaText(schema);
      const outcome: Outcome =
        json instanceof SchemaRefusal
          ? { kind: 'refused', message: json.message, details: json.details }
          : (local.validate(json.text, value, text.length) ??
            (await outcomeOf({ op: 'validate', schema: json.text, value: text })));
      switch (outcome.kind) {
        case 'ok':
          return;
        case 'refused':
          throw new DomainError(
            'CONFLICT',
            `${what} cannot be checked: its schema ${outcome.message}`,
            located(outcome.details, 'schema'),
          );
        case 'invalid':
          throw badRequest(`${what} does not match its schema`, located(outcome.details, root));
        case 'too-deep':
          throw tooDeep();
        case 'too-costly':
          throw badRequest(`${what} needs more pattern matching to check than Gantry allows`, tooCostly(root));
      }
    },

    /** The worker's cache (validators.ts, stats). */
    async stats(): Promise<ValidatorStats> {
      const answer = await run({ op: 'stats' });
      if ('stats' in answer) return answer.stats;
      throw new Error('json schema worker gave no stats');
    },

    /** Ends the worker; jobs still waiting fail. */
    async close(): Promise<void> {
      if (headTimer) clearTimeout(headTimer);
      if (idleTimer) clearTimeout(idleTimer);
      const w = worker;
      worker = null;
      for (const [id, entry] of pending) entry.resolve({ id, failure: 'the server is stopping' });
      pending.clear();
      await w?.terminate();
    },
  };
}
