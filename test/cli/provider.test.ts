import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { createTestApp } from '../helpers/app.js';
import { credentialKeyId, databaseText } from '../helpers/postgres.js';

const KEY = 'sk-live-THIS-KEY-MUST-NEVER-APPEAR-0042';

describe('gantry provider', () => {
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-cli-provider-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('sets a provider, stores its key encrypted, and never prints it', async () => {
    const set = await cli(
      [
        'provider',
        'set',
        'anthropic',
        '--base-url',
        'https://api.anthropic.com/',
        '--api-key',
        KEY,
        '--model',
        'claude-a',
        'claude-b',
        '--priority',
        '2',
        '--price-in',
        '3',
        '--price-out',
        '15',
        '--json',
      ],
      { dataDir },
    );
    assert.equal(set.code, 0, set.stderr);
    const shown = set.json<Record<string, unknown>>();
    assert.deepEqual(
      { ...shown, createdAt: undefined, updatedAt: undefined },
      {
        name: 'anthropic',
        baseUrl: 'https://api.anthropic.com',
        apiKeyLastFour: '0042',
        models: ['claude-a', 'claude-b'],
        priority: 2,
        keyId: credentialKeyId(1),
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    const human = await cli(
      ['provider', 'set', 'openai', '--base-url', 'http://127.0.0.1:11434/v1', '--api-key', `${KEY}-2`],
      { dataDir },
    );
    assert.equal(human.code, 0, human.stderr);
    assert.match(
      human.stdout,
      /provider openai set: http:\/\/127\.0\.0\.1:11434\/v1, models gpt-4o-mini, priority 100/,
    );

    const list = await cli(['provider', 'list', '--json'], { dataDir });
    assert.deepEqual(
      list.json<Array<{ name: string; priority: number }>>().map((p) => [p.name, p.priority]),
      [
        ['anthropic', 2],
        ['openai', 100],
      ],
    );
    const table = await cli(['provider', 'list'], { dataDir });
    assert.match(table.stdout, /anthropic\s+2\s+https:\/\/api\.anthropic\.com\s+claude-a,claude-b\s+\.\.\.0042/);
    for (const out of [set, human, list, table])
      assert.ok(!`${out.stdout}${out.stderr}`.includes(KEY), 'the key is never printed');

    const prices = await cli(['provider', 'prices', '--json'], { dataDir });
    const rows =
      prices.json<
        Array<{ provider: string; model: string; inputUsdPerMtok: number; outputUsdPerMtok: number; source: string }>
      >();
    assert.deepEqual(
      rows
        .filter((r) => r.provider === 'anthropic' && ['claude-a', 'claude-b'].includes(r.model))
        .map((r) => [r.model, r.inputUsdPerMtok, r.outputUsdPerMtok, r.source]),
      [
        ['claude-a', 3, 15, 'operator'],
        ['claude-b', 3, 15, 'operator'],
      ],
    );
    assert.ok(
      rows.some((r) => r.model === 'gpt-4o-mini' && r.source === 'default'),
      'the default table is seeded',
    );

    const stored = await databaseText(dataDir);
    assert.ok(stored.includes(`v1.${credentialKeyId(1)}.`), 'a sealed value is stored');
    assert.ok(!stored.includes('THIS-KEY-MUST-NEVER-APPEAR'), 'the raw database holds no plaintext key');

    // The server opens the sealed key again (same data dir, same keyring).
    const t = await createTestApp({ dataDir });
    try {
      const configured = await t.app.services.ai.admin.configured();
      assert.deepEqual(
        configured.map((p) => [p.name, p.apiKey]),
        [
          ['anthropic', KEY],
          ['openai', `${KEY}-2`],
        ],
      );
    } finally {
      await t.close();
    }
  });

  it('keeps models and priority when only the key is replaced; removes providers', async () => {
    const again = await cli(
      [
        'provider',
        'set',
        'anthropic',
        '--base-url',
        'https://api.anthropic.com',
        '--api-key',
        'sk-new-key-0000000009',
        '--json',
      ],
      { dataDir },
    );
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(
      [
        again.json<{ models: string[] }>().models,
        again.json<{ priority: number }>().priority,
        again.json<{ apiKeyLastFour: string }>().apiKeyLastFour,
      ],
      [['claude-a', 'claude-b'], 2, '0009'],
    );
    const removed = await cli(['provider', 'remove', 'anthropic', '--yes', '--json'], { dataDir });
    assert.deepEqual(removed.json(), { name: 'anthropic', removed: true });
    const list = await cli(['provider', 'list', '--json'], { dataDir });
    assert.deepEqual(
      list.json<Array<{ name: string }>>().map((p) => p.name),
      ['openai'],
    );
    const missing = await cli(['provider', 'remove', 'anthropic', '--yes'], { dataDir });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /Provider anthropic not found/);
  });

  it('refuses bad input with exit 2, naming the problem', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['provider', 'set', 'mistral', '--base-url', 'https://x.test', '--api-key', 'k'], /unknown provider "mistral"/],
      [['provider', 'set', 'openai', '--api-key', 'k'], /missing required option --base-url/],
      [['provider', 'set', 'openai', '--base-url', 'https://x.test'], /missing required option --api-key/],
      [['provider', 'set', 'openai', '--base-url', 'ftp://x.test', '--api-key', 'k'], /http\(s\) URL/],
      [
        ['provider', 'set', 'openai', '--base-url', 'https://user:pw@x.test', '--api-key', 'k'],
        /must not carry credentials/,
      ],
      [
        ['provider', 'set', 'openai', '--base-url', 'https://x.test', '--api-key', 'k', '--price-in', '1'],
        /--price-in and --price-out together/,
      ],
      [
        ['provider', 'set', 'openai', '--base-url', 'https://x.test', '--api-key', 'k', '--priority', 'high'],
        /--priority must be an integer/,
      ],
    ];
    for (const [args, message] of cases) {
      const res = await cli(args, { dataDir });
      assert.equal(res.code, 2, args.join(' '));
      assert.match(res.stderr, message);
    }
  });
});
