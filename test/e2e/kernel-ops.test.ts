import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { runBin, spawnGantry } from '../helpers/spawn.js';
import { TEST_ENV } from '../helpers/app.js';
import { createTestDatabase, sharedKeys, TEST_ENGINE } from '../helpers/postgres.js';

describe('the built binary: operations', () => {
  it('prints help listing the commands', async () => {
    const res = await runBin(['--help'], TEST_ENV);
    assert.equal(res.code, 0);
    for (const name of ['serve', 'migrate', 'backup', 'user', 'mail'])
      assert.match(res.stdout, new RegExp(`\\b${name}\\b`));
  });

  it('bad configuration: one line on stderr, exit 1, no stack trace', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gantry-e2e-cfg-'));
    try {
      const badPort = await runBin(['serve'], { ...TEST_ENV, GANTRY_DATA_DIR: dir, GANTRY_PORT: 'eighty' });
      assert.equal(badPort.code, 1);
      assert.equal(badPort.stderr.trim().split('\n').length, 1, badPort.stderr);
      assert.match(badPort.stderr, /^gantry: GANTRY_PORT must be a port number/);
      const file = path.join(dir, 'plain-file');
      writeFileSync(file, '');
      const badDir = await runBin(['serve', '--port', '0'], { ...TEST_ENV, GANTRY_DATA_DIR: path.join(file, 'data') });
      assert.equal(badDir.code, 1);
      assert.equal(badDir.stderr.trim().split('\n').length, 1, badDir.stderr);
      assert.match(badDir.stderr, /data directory .* is not writable/);
      assert.doesNotMatch(badDir.stderr + badPort.stderr, /\n\s+at /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('two processes migrating one fresh data dir at once both succeed, each migration applied once', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gantry-e2e-race-'));
    // On PostgreSQL: one empty database, which both take turns to migrate (an advisory lock).
    const database = TEST_ENGINE === 'postgres' ? await createTestDatabase(dir, { empty: true }) : null;
    try {
      const env = {
        ...TEST_ENV,
        GANTRY_DATA_DIR: dir,
        ...(database && { GANTRY_DATABASE_URL: database.url, ...sharedKeys(dir) }),
      };
      const [a, b] = await Promise.all([runBin(['migrate', '--json'], env), runBin(['migrate', '--json'], env)]);
      assert.equal(a.code, 0, a.stderr);
      assert.equal(b.code, 0, b.stderr);
      const applied = [
        ...(JSON.parse(a.stdout) as { applied: string[] }).applied,
        ...(JSON.parse(b.stdout) as { applied: string[] }).applied,
      ];
      const select = 'select id from schema_migrations order by id';
      let recorded: string[];
      if (database) {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        recorded = (await client.query<{ id: string }>(select).finally(() => client.end())).rows.map((r) => r.id);
      } else {
        const db = new SqliteDatabase(path.join(dir, 'gantry.db'), { readonly: true });
        try {
          recorded = (db.prepare(select).all() as Array<{ id: string }>).map((r) => r.id);
        } finally {
          db.close();
        }
      }
      assert.ok(recorded.length > 0);
      assert.deepEqual([...applied].sort(), recorded);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await database?.drop();
    }
  });

  it('protects the installation off a terminal: serve creates its data dir, a typo is refused, a deletion needs --yes', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'gantry-e2e-protect-'));
    const g = await spawnGantry({ dataDir: path.join(home, 'new', 'data') });
    try {
      assert.ok(existsSync(g.dataDir), 'serve made its data directory');
      const args = ['--name', 'E2E App', '--type', 'public', '--redirect-uri', 'https://e2e.example/cb'];
      const created = await g.cli(['client', 'create', ...args, '--scope', 'email:read', '--json']);
      assert.equal(created.code, 0, created.stderr);
      const { clientId } = JSON.parse(created.stdout) as { clientId: string };

      // stdin is not a terminal here: no question can be asked, so --yes is required.
      const unconfirmed = await g.cli(['client', 'delete', 'E2E App', '--json']);
      assert.equal(unconfirmed.code, 2);
      assert.match(unconfirmed.stderr, /^gantry: Delete client 'E2E App' .*Pass --yes to confirm/);
      assert.equal((JSON.parse(unconfirmed.stdout) as { error: { code: string } }).error.code, 'USAGE');
      assert.equal((await g.cli(['client', 'show', clientId])).code, 0, 'still there');

      const typo = path.join(home, 'new', 'dta');
      const refused = await runBin(['client', 'list', '--json', '--data-dir', typo], TEST_ENV);
      assert.equal(refused.code, 1);
      assert.equal(
        refused.stderr,
        `gantry: data directory ${typo} does not exist (gantry serve or gantry migrate creates one; check --data-dir and GANTRY_DATA_DIR)\n`,
      );
      assert.equal((JSON.parse(refused.stdout) as { error: { code: string } }).error.code, 'CONFIG');
      assert.equal(existsSync(typo), false);

      const deleted = await g.cli(['client', 'delete', 'E2E App', '--yes', '--json']);
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.equal((JSON.parse(deleted.stdout) as { clientId: string }).clientId, clientId);
    } finally {
      await g.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });

  // Start-up time is measured by `npm run bench` (bench/kernel.bench.ts), not asserted here:
  // a wall-clock bound fails on a loaded machine and proves nothing on an idle one.
  it('starts, backs up while serving, and on SIGTERM finishes the in-flight request, then exits 0', async () => {
    const g = await spawnGantry();
    try {
      assert.equal((await fetch(`${g.url}/readyz`)).status, 200);
      const created = await g.cli([
        'user',
        'create',
        '--email',
        'ops@example.test',
        '--password',
        'long enough pw',
        '--json',
      ]);
      assert.equal(created.code, 0, created.stderr);

      // A sign-in while a backup runs, then the backup holds the user.
      const target = path.join(g.dataDir, 'backup.db');
      const [backup, login] = await Promise.all([
        g.cli(['backup', target, '--json']),
        fetch(`${g.url}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'ops@example.test', password: 'long enough pw' }),
        }),
      ]);
      assert.equal(login.status, 200);
      if (TEST_ENGINE === 'postgres') {
        // The counterpart: backup copies the SQLite file only and names PostgreSQL's own tools.
        assert.equal(backup.code, 2);
        assert.match(backup.stderr, /pg_dump/);
        assert.equal(existsSync(target), false);
      } else {
        assert.equal(backup.code, 0, backup.stderr);
        const copy = new SqliteDatabase(target, { readonly: true });
        try {
          assert.deepEqual(copy.prepare('select email from users').all(), [{ email: 'ops@example.test' }]);
          assert.equal(copy.pragma('integrity_check', { simple: true }) as string, 'ok');
        } finally {
          copy.close();
        }
      }

      // An in-flight request: headers and half the body sent, then SIGTERM, then the rest.
      const payload = JSON.stringify({ email: 'ops@example.test', password: 'long enough pw' });
      const { port, hostname } = new URL(g.url);
      const exited = new Promise<number | null>((resolve) => g.proc.once('exit', (code) => resolve(code)));
      const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          {
            host: hostname,
            port,
            method: 'POST',
            path: '/api/v1/auth/login',
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
          },
          (res) => {
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
        req.write(payload.slice(0, 10));
        setTimeout(() => {
          g.proc.kill('SIGTERM');
          setTimeout(() => req.end(payload.slice(10)), 300);
        }, 200);
      });
      const res = await answer;
      assert.equal(res.status, 200);
      assert.equal(typeof (JSON.parse(res.body) as { data: { accessToken: string } }).data.accessToken, 'string');
      assert.equal(await exited, 0);
      await assert.rejects(fetch(`${g.url}/healthz`));
    } finally {
      await g.stop();
    }
  });
});
