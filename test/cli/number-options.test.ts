import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { credentialKeyring } from '../helpers/postgres.js';
import { numberOption, UsageError } from '../../src/cli/io.js';

describe('numeric CLI options', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  it('parses within bounds and refuses anything else, naming the flag', () => {
    assert.equal(numberOption('limit', undefined), undefined);
    assert.equal(numberOption('limit', '7', { integer: true, min: 1, max: 500 }), 7);
    assert.equal(numberOption('price-in', '0.25'), 0.25);
    for (const bad of ['', ' ', 'abc', '1.5', '0', '501', 'Infinity']) {
      assert.throws(
        () => numberOption('limit', bad, { integer: true, min: 1, max: 500 }),
        (err: Error) => err instanceof UsageError && err.message.includes('--limit'),
        bad,
      );
    }
  });

  it('a mistyped number exits 2 instead of falling back to a default', async () => {
    const mail = await cli(['mail', 'list', '--limit', 'abc'], { dataDir: t.dataDir });
    assert.equal(mail.code, 2);
    assert.match(mail.stderr, /--limit must be an integer/);
    const sort = await cli(['service', 'create', '--slug', 'api', '--name', 'API', '--sort-order', '1.5'], {
      dataDir: t.dataDir,
    });
    assert.equal(sort.code, 2);
    assert.match(sort.stderr, /--sort-order/);
  });

  it('secrets rotate refuses a bad --settle-ms before it adds a key', async () => {
    const keysBefore = await credentialKeyring(t.dataDir);
    const res = await cli(['secrets', 'rotate', '--settle-ms', 'soon', '--yes'], { dataDir: t.dataDir });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /--settle-ms/);
    assert.deepEqual(await credentialKeyring(t.dataDir), keysBefore);
  });
});
