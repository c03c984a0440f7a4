import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { cli } from '../helpers/cli.js';
import { TEST_ENGINE } from '../helpers/postgres.js';

/** `gantry backup FILE` never overwrites without --force, nor ever the live database (docs/kernel.md, CLI). */
describe('gantry backup over an existing file', () => {
  let dir: string;
  let out: string;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gantry-cli-backup-'));
    out = mkdtempSync(path.join(tmpdir(), 'gantry-cli-backup-out-'));
    const created = await cli(['user', 'create', '--email', 'backup@example.test', '--password', 'long enough pw'], {
      dataDir: dir,
    });
    assert.equal(created.code, 0, created.stderr);
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  /** PostgreSQL has its own tools: backup refuses before it looks at FILE, which stays as it was. */
  async function assertPostgresRefusal(target: string, content: string, extra: string[] = []) {
    const res = await cli(['backup', target, ...extra], { dataDir: dir });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /pg_dump/);
    assert.equal(readFileSync(target, 'utf8'), content);
  }

  const emails = (file: string) => {
    const copy = new SqliteDatabase(file, { readonly: true });
    try {
      return (copy.prepare('select email from users').all() as Array<{ email: string }>).map((r) => r.email);
    } finally {
      copy.close();
    }
  };

  it('refuses an existing FILE without --force (exit 2 naming --force), leaving it untouched', async () => {
    const target = path.join(out, 'precious.db');
    writeFileSync(target, "last week's backup");
    if (TEST_ENGINE === 'postgres') return assertPostgresRefusal(target, "last week's backup");
    const res = await cli(['backup', target, '--json'], { dataDir: dir });
    assert.equal(res.code, 2);
    assert.equal(res.stderr, `gantry: ${target} already exists; pass --force to replace it (it was left untouched)`);
    assert.equal(res.json<{ error: { code: string } }>().error.code, 'USAGE');
    assert.equal(readFileSync(target, 'utf8'), "last week's backup");
    assert.deepEqual(readdirSync(out), ['precious.db'], 'no partial copy left behind');
  });

  it('--force replaces it with a complete copy', async () => {
    const target = path.join(out, 'replaced.db');
    writeFileSync(target, 'not even a database');
    if (TEST_ENGINE === 'postgres') return assertPostgresRefusal(target, 'not even a database', ['--force']);
    const res = await cli(['backup', target, '--force', '--json'], { dataDir: dir });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json<{ file: string }>().file, target);
    assert.deepEqual(emails(target), ['backup@example.test']);
    assert.ok(!readdirSync(out).some((name) => name.includes('partial')));
  });

  it('a new FILE needs no --force; the live database is refused even with it', async () => {
    const fresh = path.join(out, 'fresh.db');
    if (TEST_ENGINE === 'postgres') {
      assert.match((await cli(['backup', fresh], { dataDir: dir })).stderr, /pg_dump/);
      return assert.equal(existsSync(fresh), false);
    }
    assert.equal((await cli(['backup', fresh], { dataDir: dir })).code, 0);
    assert.deepEqual(emails(fresh), ['backup@example.test']);
    const live = path.join(dir, 'gantry.db');
    const res = await cli(['backup', live, '--force'], { dataDir: dir });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /is the live database/);
    assert.deepEqual(emails(live), ['backup@example.test']);
    const missing = await cli(['backup', path.join(out, 'no-such-dir', 'x.db')], { dataDir: dir });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /directory .*no-such-dir does not exist/);
    assert.equal(existsSync(path.join(out, 'no-such-dir')), false);
  });
});
