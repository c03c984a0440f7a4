import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { cli } from '../helpers/cli.js';
import { createTestDatabase, queryTestDatabase, TEST_ENGINE } from '../helpers/postgres.js';

describe('kernel CLI', () => {
  let dir: string;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gantry-cli-'));
    // On PostgreSQL an empty database, not a copy of the migrated template: `migrate` applies all.
    if (TEST_ENGINE === 'postgres') await createTestDatabase(dir, { empty: true });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--help lists the commands', async () => {
    const res = await cli(['--help'], { dataDir: dir });
    assert.equal(res.code, 0);
    for (const name of ['serve', 'migrate', 'backup', 'user', 'mail'])
      assert.match(res.stdout, new RegExp(`\\b${name}\\b`));
  });

  it('migrate --json: one JSON document; a second run applies nothing; secrets.json is 0600 (none on PostgreSQL)', async () => {
    const first = await cli(['migrate', '--json'], { dataDir: dir });
    assert.equal(first.code, 0, first.stderr);
    const doc = first.json<{ applied: string[]; current: string }>();
    assert.ok(doc.applied.length > 0);
    const second = await cli(['migrate', '--json'], { dataDir: dir });
    assert.deepEqual(second.json<{ applied: string[] }>().applied, []);
    // On PostgreSQL the keys come from the environment and no secrets.json is written (docs/postgres.md, Secrets).
    if (TEST_ENGINE === 'postgres') assert.equal(existsSync(path.join(dir, 'secrets.json')), false);
    else assert.equal(statSync(path.join(dir, 'secrets.json')).mode & 0o777, 0o600);
  });

  it('user create: --json prints the user, never the password; a duplicate exits 2', async () => {
    const res = await cli(
      [
        'user',
        'create',
        '--email',
        'Cli@Example.test',
        '--password',
        'cli password 1',
        '--name',
        'Cli User',
        '--username',
        'cli_user',
        '--verified',
        '--json',
      ],
      { dataDir: dir },
    );
    assert.equal(res.code, 0, res.stderr);
    const user = res.json<{ id: string; email: string; fullName: string; username: string; emailVerified: boolean }>();
    assert.equal(user.email, 'cli@example.test');
    assert.equal(user.username, 'cli_user');
    assert.equal(user.emailVerified, true);
    assert.doesNotMatch(res.stdout, /cli password 1|scrypt/);
    const dup = await cli(['user', 'create', '--email', 'cli@example.test', '--password', 'cli password 1'], {
      dataDir: dir,
    });
    assert.equal(dup.code, 2);
    assert.match(dup.stderr, /already exists/);
  });

  it('missing required options without a TTY: exit 2 naming the flag', async () => {
    const res = await cli(['user', 'create', '--email', 'x@example.test'], { dataDir: dir });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /--password/);
    const noArg = await cli(['backup'], { dataDir: dir });
    assert.equal(noArg.code, 2);
  });

  it('unknown commands and options exit 2', async () => {
    assert.equal((await cli(['frobnicate'], { dataDir: dir })).code, 2);
    assert.equal((await cli(['migrate', '--nope'], { dataDir: dir })).code, 2);
  });

  it('backup FILE writes a consistent copy holding the data', async () => {
    const target = path.join(dir, 'copy.db');
    const res = await cli(['backup', target, '--json'], { dataDir: dir });
    if (TEST_ENGINE === 'postgres') {
      // The counterpart: backup copies the SQLite file only and names PostgreSQL's own tools.
      assert.equal(res.code, 2);
      assert.equal(res.json<{ error: { code: string } }>().error.code, 'USAGE');
      assert.match(res.stderr, /pg_dump/);
      assert.equal(existsSync(target), false);
      return;
    }
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json<{ file: string }>().file, target);
    const copy = new SqliteDatabase(target, { readonly: true });
    try {
      const row = copy.prepare('select email from users where email = ?').get('cli@example.test');
      assert.deepEqual(row, { email: 'cli@example.test' });
    } finally {
      copy.close();
    }
  });

  it('mail list --json: the outbox, newest first', async () => {
    const res = await cli(['mail', 'list', '--json'], { dataDir: dir });
    assert.equal(res.code, 0, res.stderr);
    assert.ok(Array.isArray(res.json()));
  });

  it('a database migrated by a newer gantry: one line, exit 1, nothing changed', async () => {
    const newer = mkdtempSync(path.join(tmpdir(), 'gantry-cli-newer-'));
    try {
      assert.equal((await cli(['migrate'], { dataDir: newer })).code, 0);
      const insert = 'insert into schema_migrations (id, applied_at) values ($1, $2)';
      if (TEST_ENGINE === 'postgres') await queryTestDatabase(newer, insert, ['9999_future', new Date().toISOString()]);
      else {
        const db = new SqliteDatabase(path.join(newer, 'gantry.db'));
        db.prepare(insert.replace(/\$\d/g, '?')).run('9999_future', new Date().toISOString());
        db.close();
      }
      const res = await cli(['migrate', '--json'], { dataDir: newer });
      assert.equal(res.code, 1);
      const { error } = res.json<{ error: { code: string; message: string } }>();
      assert.equal(error.code, 'CONFIG');
      assert.match(error.message, /^the database was migrated by a newer gantry .*9999_future/);
      assert.match(res.stderr, /^gantry: the database was migrated by a newer gantry .*9999_future/);
      assert.equal(res.stderr.trim().split('\n').length, 1);
    } finally {
      rmSync(newer, { recursive: true, force: true });
    }
  });

  it('configuration errors: one line, exit 1, no stack', async () => {
    const badPort = await cli(['serve', '--port', '99999'], { dataDir: dir });
    assert.equal(badPort.code, 1);
    assert.equal(badPort.stderr.trim().split('\n').length, 1);
    assert.match(badPort.stderr, /GANTRY_PORT must be a port number/);
    assert.doesNotMatch(badPort.stderr, /\n\s+at /);

    const badProxy = await cli(['serve', '--port', '0', '--trusted-proxies', '10.0.0.0/8, nginx.local'], {
      dataDir: dir,
    });
    assert.equal(badProxy.code, 1);
    assert.equal(badProxy.stderr.trim().split('\n').length, 1);
    assert.match(badProxy.stderr, /GANTRY_TRUSTED_PROXIES must list IP addresses or CIDR networks .*"nginx\.local"/);
    assert.equal(badProxy.stdout, '');

    const file = path.join(dir, 'a-file');
    writeFileSync(file, 'x');
    const unwritable = await cli(['migrate'], { dataDir: path.join(file, 'data') });
    assert.equal(unwritable.code, 1);
    assert.equal(unwritable.stderr.trim().split('\n').length, 1);
    assert.match(unwritable.stderr, /data directory .* is not writable/);
    assert.ok(!existsSync(path.join(file, 'data')));
  });
});
