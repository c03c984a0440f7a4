import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBackgroundCheckpoints } from '../../src/db/checkpoints.js';
import { openDatabase } from '../../src/db/connection.js';
import { createLogger } from '../../src/lib/logger.js';

/** Waits for `done` to hold, up to `ms`. */
async function until(done: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A served SQLite database checkpoints from a worker thread (src/db/checkpoints.ts; docs/kernel.md,
 * Checkpoints): never in the serving connection, and as before when the worker is gone. Not a
 * PostgreSQL matter: it runs the same on either half.
 */
describe('background checkpoints of a served SQLite database', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gantry-checkpoints-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the serving connection stops checkpointing; the worker copies the WAL into the file; stop gives it back', async () => {
    const file = path.join(dir, 'served.db');
    const handle = openDatabase(file);
    const { sqlite } = handle;
    sqlite.exec('create table t (id integer primary key, body text not null)');
    const lines: string[] = [];
    const checkpoints = startBackgroundCheckpoints(
      sqlite,
      file,
      createLogger('debug', (line) => lines.push(line)),
    );
    assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 0);
    const before = statSync(file).size;
    const insert = sqlite.prepare('insert into t (body) values (?)');
    // 1,200 commits of a page each: past SQLite's own 1,000-page threshold, which no longer applies here.
    for (let i = 0; i < 1200; i++) insert.run('x'.repeat(3000));
    await until(() => checkpoints.checkpointedFrames() >= 1200, 10_000, 'the worker checkpointed every frame');
    assert.ok(statSync(file).size > before + 1200 * 3000, 'the pages are in the database file itself');
    await checkpoints.stop();
    assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 1000);
    await handle.close();
    const again = openDatabase(file);
    assert.deepEqual(again.sqlite.prepare('select count(*) as n from t').get(), { n: 1200 });
    await again.close();
    assert.deepEqual(lines, [], 'nothing went wrong');
  });

  it('a worker that cannot open the file ends with a warning, and the serving connection checkpoints by itself again', async () => {
    const handle = openDatabase(path.join(dir, 'other.db'));
    const lines: string[] = [];
    const checkpoints = startBackgroundCheckpoints(
      handle.sqlite,
      path.join(dir, 'missing', 'nothing.db'),
      createLogger('debug', (line) => lines.push(line)),
    );
    await until(() => lines.some((l) => l.includes('checkpoints by itself again')), 10_000, 'the worker ended');
    assert.equal(handle.sqlite.pragma('wal_autocheckpoint', { simple: true }), 1000);
    assert.ok(
      lines.some((l) => l.includes('the checkpoint worker failed')),
      lines.join('\n'),
    );
    await checkpoints.stop();
    await handle.close();
  });
});
