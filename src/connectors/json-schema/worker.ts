/**
 * The schema worker's entry (engine.ts starts it; esbuild bundles it as
 * dist/json-schema-worker.cjs): compiles and runs JSON Schemas off the main thread, one job at
 * a time, in the order they arrive.
 */
import { parentPort } from 'node:worker_threads';
import { createValidators, type Outcome, type ValidatorStats } from './validators.js';

export type JobRequest =
  | { op: 'check'; schema: string }
  | { op: 'validate'; schema: string; value: string }
  | { op: 'stats' };
export type Job = JobRequest & { id: number };

export type Answer =
  | { id: number; outcome: Outcome }
  | { id: number; stats: ValidatorStats }
  /** An unexpected failure inside the worker; its message is logged, never shown. */
  | { id: number; failure: string };

const validators = createValidators();

function run(job: Job): Answer {
  try {
    if (job.op === 'stats') return { id: job.id, stats: validators.stats() };
    if (job.op === 'check') return { id: job.id, outcome: validators.check(job.schema) };
    return { id: job.id, outcome: validators.validate(job.schema, job.value) };
  } catch (err) {
    return { id: job.id, failure: (err as Error).stack ?? String(err) };
  }
}

parentPort?.on('message', (job: Job) => parentPort?.postMessage(run(job)));
