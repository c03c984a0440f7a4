import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli, type CliResult } from '../helpers/cli.js';
import { makeUser } from '../helpers/factories.js';

/**
 * With --json a failure is exactly one document `{"error": {"code", "message"}}` on stdout, the
 * human line on stderr, and the exit code it always had (docs/kernel.md, CLI).
 */
describe('--json failures', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());
  const run = (args: string[]) => cli(args, { dataDir: t.dataDir });

  function assertFailure(res: CliResult, exitCode: number, code: string, message: RegExp) {
    assert.equal(res.code, exitCode, res.stderr);
    const doc = JSON.parse(res.stdout) as { error: { code: string; message: string } };
    assert.deepEqual(Object.keys(doc), ['error']);
    assert.deepEqual(Object.keys(doc.error), ['code', 'message']);
    assert.equal(doc.error.code, code);
    assert.match(doc.error.message, message);
    assert.match(res.stderr, message);
  }

  it('a service refusal carries its own code and exit 2', async () => {
    const user = await makeUser(t.app);
    assertFailure(
      await run(['user', 'create', '--email', user.email, '--password', 'long enough pw', '--json']),
      2,
      'CONFLICT',
      /already exists/,
    );
    assertFailure(await run(['client', 'show', 'No Such App', '--json']), 2, 'NOT_FOUND', /Client not found/);
    assertFailure(
      await run([
        'client',
        'create',
        '--name',
        'Bad',
        '--type',
        'public',
        '--redirect-uri',
        'http://app.example/cb',
        '--scope',
        'email:read',
        '--json',
      ]),
      2,
      'VALIDATION_FAILED',
      /redirect URI/,
    );
  });

  it("usage mistakes are USAGE with exit 2, commander's own included", async () => {
    assertFailure(await run(['client', 'list', '--nope', '--json']), 2, 'USAGE', /unknown option '--nope'/);
    assertFailure(await run(['client', 'create', '--json']), 2, 'USAGE', /missing required option --name/);
    assertFailure(await run(['mail', 'list', '--limit', 'lots', '--json']), 2, 'USAGE', /--limit must be an integer/);
  });

  it('configuration is CONFIG with exit 1', async () => {
    const res = await cli(['client', 'list', '--json'], {
      dataDir: t.dataDir,
      env: { GANTRY_LOG_LEVEL: 'chatty' },
    });
    assertFailure(res, 1, 'CONFIG', /GANTRY_LOG_LEVEL must be one of/);
  });

  it('without --json stdout stays empty', async () => {
    const res = await run(['client', 'show', 'No Such App']);
    assert.equal(res.code, 2);
    assert.equal(res.stdout, '');
    assert.equal(res.stderr, 'gantry: Client not found: no id or name "No Such App"');
  });
});
