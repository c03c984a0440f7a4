import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/program.js';
import { createAppContext, startApp } from '../../src/app.js';
import { TEST_ENV } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { sharedKeys, TEST_ENGINE, testDatabaseEnv } from '../helpers/postgres.js';

/**
 * A --data-dir that does not exist (a typo) is refused by every command but serve and migrate,
 * which create it: a typo must not start a second, empty installation (docs/kernel.md, CLI).
 */
describe('a missing data directory', () => {
  let home: string;
  before(() => {
    home = mkdtempSync(path.join(tmpdir(), 'gantry-cli-datadir-'));
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it('is refused by every other command in one line naming it (exit 1), and not created', async () => {
    const typo = path.join(home, 'dta');
    const commands = [
      ['user', 'create', '--email', 'typo@example.test', '--password', 'long enough pw'],
      ['client', 'list'],
      ['account', 'list'],
      ['mail', 'list'],
      ['backup', path.join(home, 'copy.db')],
      ['client', 'delete', 'Some App', '--yes'],
      ['secrets', 'rotate', '--yes'],
    ];
    for (const args of commands) {
      const res = await cli([...args, '--json'], { dataDir: typo, missingDataDir: true });
      assert.equal(res.code, 1, `${args.join(' ')}: ${res.stderr}`);
      assert.equal(res.stderr.split('\n').length, 1, res.stderr);
      assert.match(res.stderr, new RegExp(`^gantry: data directory ${typo} does not exist`));
      assert.deepEqual(Object.keys(res.json<{ error: object }>().error), ['code', 'message']);
      assert.equal(res.json<{ error: { code: string } }>().error.code, 'CONFIG');
      assert.equal(existsSync(typo), false, args.join(' '));
    }
  });

  it('is refused before any prompt on a terminal', async () => {
    const typo = path.join(home, 'dat');
    const res = await cli(['user', 'create'], { dataDir: typo, missingDataDir: true, terminal: [] });
    assert.equal(res.code, 1);
    assert.equal(res.screen, '', 'nothing was asked');
    assert.equal(existsSync(typo), false);
  });

  it('named in GANTRY_DATA_DIR is refused the same way', async () => {
    const typo = path.join(home, 'from-env');
    const err: string[] = [];
    const code = await runCli(['client', 'list'], {
      out: () => {},
      err: (line) => err.push(line),
      interactive: false,
      env: { ...TEST_ENV, ...(await testDatabaseEnv(typo)), GANTRY_DATA_DIR: typo },
      stopSignal: new Promise(() => {}),
      app: { open: createAppContext, start: startApp },
    });
    assert.equal(code, 1);
    assert.deepEqual(err, [
      `gantry: data directory ${typo} does not exist (gantry serve or gantry migrate creates one; check --data-dir and GANTRY_DATA_DIR)`,
    ]);
    assert.equal(existsSync(typo), false);
  });

  it('is created by migrate (and serve, test/e2e/kernel-ops.test.ts)', async () => {
    const fresh = path.join(home, 'fresh', 'data');
    const res = await cli(['migrate', '--json'], { dataDir: fresh, missingDataDir: true });
    assert.equal(res.code, 0, res.stderr);
    assert.ok(existsSync(fresh));
    assert.equal((await cli(['client', 'list', '--json'], { dataDir: fresh, missingDataDir: true })).code, 0);
  });

  it('unnamed (the default ./data) on PostgreSQL is neither needed nor created; on SQLite it is refused', async () => {
    const cwd = process.cwd();
    const elsewhere = mkdtempSync(path.join(home, 'cwd-'));
    process.chdir(elsewhere);
    try {
      const out: string[] = [];
      const err: string[] = [];
      const env: NodeJS.ProcessEnv = { ...TEST_ENV };
      // The database of another data dir (already migrated), with its keys: an operator's other machine.
      if (TEST_ENGINE === 'postgres') Object.assign(env, await testDatabaseEnv(home), sharedKeys(home));
      const code = await runCli(['client', 'list', '--json'], {
        out: (line) => out.push(line),
        err: (line) => err.push(line),
        interactive: false,
        env,
        stopSignal: new Promise(() => {}),
        app: { open: createAppContext, start: startApp },
      });
      if (TEST_ENGINE === 'postgres') {
        assert.equal(code, 0, err.join('\n'));
        assert.ok(Array.isArray(JSON.parse(out.join('\n'))));
      } else {
        assert.equal(code, 1);
        assert.match(err.join('\n'), new RegExp(`data directory ${path.join(elsewhere, 'data')} does not exist`));
      }
      assert.equal(existsSync(path.join(elsewhere, 'data')), false);
    } finally {
      process.chdir(cwd);
    }
  });
});
