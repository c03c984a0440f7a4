import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';

/** `gantry user create` obeys the same rules as sign-up: they live in the identity service. */
describe('gantry user create follows the sign-up rules', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  const create = (args: string[]) => cli(['user', 'create', ...args], { dataDir: t.dataDir });

  it('refuses a malformed email, a short password, a malformed or reserved username, with exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--email', 'not-an-email', '--password', 'long enough pw'], /email/],
      [['--email', 'short@example.test', '--password', 'short'], /password/],
      [['--email', 'name@example.test', '--password', 'long enough pw', '--username', 'no spaces allowed'], /username/],
      [['--email', 'admin@example.test', '--password', 'long enough pw', '--username', 'Admin'], /reserved/],
    ];
    for (const [args, message] of cases) {
      const res = await create(args);
      assert.equal(res.code, 2, args.join(' '));
      assert.match(res.stderr, message, args.join(' '));
    }
    assert.equal(await t.app.services.identity.findUserByEmail('admin@example.test'), undefined);
  });

  it("lists every failing field with the kernel's details shape (field, message, joi type)", async () => {
    await assert.rejects(
      t.app.services.identity.createUser({ email: 'not-an-email', password: 'short' }),
      (err: { status: number; code: string; details: unknown }) => {
        assert.equal(err.status, 400);
        assert.equal(err.code, 'VALIDATION_FAILED');
        assert.deepEqual(err.details, [
          { field: 'email', message: 'email must be a valid email', type: 'custom' },
          { field: 'password', message: 'password length must be at least 8 characters long', type: 'string.min' },
        ]);
        return true;
      },
    );
  });

  it('creates a well-formed user', async () => {
    const res = await create([
      '--email',
      'Fine@Example.test',
      '--password',
      'long enough pw',
      '--username',
      'fine.user',
      '--json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json<{ email: string; username: string }>().email, 'fine@example.test');
  });
});
