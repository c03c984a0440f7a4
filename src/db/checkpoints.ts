import type SqliteDatabase from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../lib/logger.js';

/** How often the worker checkpoints: the WAL holds about this much of the writes between two. */
const INTERVAL_MS = 250;
/** SQLite's own default, given back to the serving connection when the worker stops. */
const AUTOCHECKPOINT_PAGES = 1000;

// The worker is this script (CommonJS, evaluated: no file of its own to find beside the bundle,
// the sources or the test build). It opens its own connection to the same file and runs PASSIVE
// checkpoints, which never wait for or block a writer or a reader. It reports only what it did.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.addon);
const db = new Database(workerData.file, { fileMustExist: true });
const timer = setInterval(() => {
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    if (row.checkpointed > 0) parentPort.postMessage({ checkpointed: row.checkpointed });
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message) });
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface BackgroundCheckpoints {
  /** WAL frames the worker has copied into the database file so far. */
  checkpointedFrames(): number;
  /** Ends the worker; the serving connection checkpoints by itself again. */
  stop(): Promise<void>;
}

/**
 * Checkpoints of a served SQLite database off the event loop (docs/kernel.md, Checkpoints). A
 * WAL checkpoint copies the WAL's pages into the database file and syncs it; SQLite runs one in
 * the committing connection every 1,000 pages, so a serving process stalled on an fsync every
 * few hundred commits: the refresh grant answered about a quarter fewer requests for it. Here the
 * serving connection never checkpoints (`wal_autocheckpoint = 0`), and a worker thread's own
 * connection does, every 250 ms. Should the worker fail, the serving connection checkpoints by
 * itself again, as before.
 */
export function startBackgroundCheckpoints(
  sqlite: SqliteDatabase.Database,
  file: string,
  logger: Logger,
): BackgroundCheckpoints {
  let frames = 0;
  let stopped = false;
  const selfCheckpointing = () => sqlite.open && sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      addon: createRequire(import.meta.url).resolve('better-sqlite3'),
      file,
      intervalMs: INTERVAL_MS,
    },
  });
  // Never what keeps the process alive: serve's stop ends it, and an exit without one loses nothing.
  worker.unref();
  sqlite.pragma('wal_autocheckpoint = 0');
  worker.on('message', (message: { checkpointed?: number; error?: string }) => {
    if (message.checkpointed) frames += message.checkpointed;
    if (message.error)
      logger.warn('a background checkpoint failed; the next one tries again', { error: message.error });
  });
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      if (!stopped) {
        logger.warn('the checkpoint worker ended; the serving connection checkpoints by itself again');
        selfCheckpointing();
      }
      resolve();
    });
  });
  worker.once('error', (err) => logger.warn('the checkpoint worker failed', { error: err.message }));
  return {
    checkpointedFrames: () => frames,
    async stop() {
      if (!stopped) {
        stopped = true;
        // Waited for now: the worker closes its connection before the serving one closes.
        worker.ref();
        worker.postMessage('stop');
        selfCheckpointing();
      }
      await exited;
    },
  };
}
