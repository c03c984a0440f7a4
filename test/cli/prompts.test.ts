import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { makeUser } from '../helpers/factories.js';

const count = (text: string, what: string) => text.split(what).length - 1;

/**
 * On a terminal a bad answer is refused at its prompt, with the service's own reason, and asked
 * again; the answers already given stand (docs/kernel.md, CLI).
 */
describe('prompts: a bad answer is asked again, earlier answers stand', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  it('user create: a malformed email, then a short password', async () => {
    const res = await cli(['user', 'create', '--json'], {
      dataDir: t.dataDir,
      terminal: [
        { expect: /Email/, keys: 'not-an-email' },
        { expect: /"email" must be a valid email/, keys: 'Prompted@Example.test' },
        { expect: /Password/, keys: 'short' },
        { expect: /"password" length must be at least 8 characters long/, keys: 'a long enough password' },
      ],
    });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json<{ email: string }>().email, 'prompted@example.test');
    // The email was settled once: the password's refusal did not ask it again.
    assert.equal(count(res.screen, '✔ Email'), 1);
    assert.equal(count(res.screen, '✔ Password'), 1);
    assert.ok(!res.screen.includes('a long enough password'), 'the password is masked');
    const user = await t.app.services.identity.findUserByEmail('prompted@example.test');
    assert.ok(await t.app.services.identity.authenticate(user!.email, 'a long enough password'));
  });

  it('account create: a bad slug, then an owner nobody has', async () => {
    const owner = await makeUser(t.app);
    const res = await cli(['account', 'create', '--legal-name', 'Prompted Legal', '--json'], {
      dataDir: t.dataDir,
      terminal: [
        { expect: /Slug/, keys: 'X' },
        { expect: /"slug" /, keys: 'prompted-slug' },
        { expect: /Owner/, keys: 'ghost@example.test' },
        { expect: /no user "ghost@example.test"/, keys: owner.email },
      ],
    });
    assert.equal(res.code, 0, res.stderr);
    const account = res.json<{ slug: string; legalName: string; ownerChainerId: string }>();
    assert.deepEqual(
      [account.slug, account.legalName, account.ownerChainerId],
      ['prompted-slug', 'Prompted Legal', owner.id],
    );
    assert.equal(count(res.screen, '✔ Slug'), 1);
  });

  it('client create: a redirect URI and a scope the service would refuse', async () => {
    const res = await cli(['client', 'create', '--name', 'Prompted Client', '--type', 'confidential', '--json'], {
      dataDir: t.dataDir,
      terminal: [
        { expect: /Redirect URIs/, keys: 'https://ok.example/cb http://app.example/cb' },
        { expect: /http:\/\/app\.example\/cb: /, keys: 'https://ok.example/cb http://127.0.0.1:9000/cb' },
        { expect: /Scopes/, keys: 'email:read, everything' },
        { expect: /everything: unknown scope/, keys: 'email:read profile:read' },
      ],
    });
    assert.equal(res.code, 0, res.stderr);
    const created = res.json<{ redirectUris: string[]; scopes: string[] }>();
    assert.deepEqual(created.redirectUris, ['https://ok.example/cb', 'http://127.0.0.1:9000/cb']);
    assert.deepEqual(created.scopes, ['email:read', 'profile:read']);
  });

  it('a refusal only the service can make, after all answers (a taken email): exit 2, nothing written', async () => {
    const taken = await makeUser(t.app);
    const res = await cli(['user', 'create', '--json'], {
      dataDir: t.dataDir,
      terminal: [
        { expect: /Email/, keys: taken.email },
        { expect: /Password/, keys: 'a long enough password' },
      ],
    });
    assert.equal(res.code, 2);
    assert.deepEqual(res.json(), { error: { code: 'CONFLICT', message: 'A user with this email already exists' } });
    // The existing user is untouched: their password is still theirs.
    await assert.rejects(t.app.services.identity.authenticate(taken.email, 'a long enough password'), /Wrong email/);
  });
});
