import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';

const CLI_WRITES = 20;
const CLI_AT_ONCE = 3;
const LOAD_WORKERS = 1;
/** Upper bound on the server's load, whatever the machine's speed. */
const MAX_LOAD_REQUESTS = 4_000;

/**
 * Write transactions begin IMMEDIATE (docs/kernel.md, Transactions): a CLI write that reads
 * before it writes waits for the server's write lock instead of failing with "database is
 * locked" when the server committed in between, and the server's own writes wait for the CLI.
 */
describe('CLI writes while the server writes on the same data directory', () => {
  let g: RunningGantry;
  before(async () => (g = await spawnGantry({ env: { GANTRY_RATE_LIMIT_MULTIPLIER: '1000' } })));
  after(() => g.stop());

  const api = async (method: string, path: string, token: string | null, body?: unknown) => {
    const res = await fetch(`${g.url}/api/v1/${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    return {
      status: res.status,
      body: (await res.json()) as { data: any; error: { code: string; message: string } | null },
    };
  };

  it(`${CLI_WRITES} gantry notify runs under a steady write load all succeed, and so does every request of the load`, async (t) => {
    const created = await g.cli([
      'user',
      'create',
      '--email',
      'locks@example.test',
      '--password',
      'long enough pw',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const userId = (JSON.parse(created.stdout) as { id: string }).id;
    const login = await api('POST', 'auth/login', null, { email: 'locks@example.test', password: 'long enough pw' });
    assert.equal(login.status, 200);
    const token = login.body.data.accessToken as string;
    const account = await api('POST', 'accounts', token, { slug: 'lock-load', legalName: 'Lock Load' });
    assert.equal(account.status, 201, JSON.stringify(account.body));
    const accountId = account.body.data.id as string;

    // The load: each request renames the account, a read-then-write transaction with an audit row.
    let done = false;
    let sent = 0;
    const failures: string[] = [];
    const worker = async (w: number) => {
      while (!done && sent < MAX_LOAD_REQUESTS) {
        const legalName = `Lock Load ${w}-${++sent}`;
        const res = await api('PATCH', `accounts/${accountId}`, token, { legalName });
        if (res.status !== 200 || res.body.data?.legalName !== legalName)
          failures.push(`${res.status} ${JSON.stringify(res.body.error)}`);
      }
    };
    const load = Promise.all(Array.from({ length: LOAD_WORKERS }, (_, w) => worker(w)));

    const results: Array<{ code: number | null; stdout: string; stderr: string }> = [];
    let next = 0;
    const runner = async () => {
      while (next < CLI_WRITES) {
        const n = next++;
        results.push(
          await g.cli(['notify', '--user', userId, '--title', `Lock ${n}`, '--body', 'written during load', '--json']),
        );
      }
    };
    try {
      await Promise.all(Array.from({ length: CLI_AT_ONCE }, runner));
    } finally {
      done = true;
      await load;
    }

    t.diagnostic(`${sent} load requests during the CLI writes`);
    assert.equal(results.length, CLI_WRITES);
    const failed = results.filter((r) => r.code !== 0).map((r) => `exit ${r.code}: ${r.stderr.trim()}`);
    assert.deepEqual(failed, []);
    assert.deepEqual(failures, []);
    assert.ok(sent > 0);

    // Every notification the CLI reported is there, once.
    const ids = results.map((r) => (JSON.parse(r.stdout) as { id: string }).id);
    const listed: string[] = [];
    for (let offset = 0; offset < CLI_WRITES; offset += 50) {
      const page = await api('GET', `notifications?limit=50&offset=${offset}`, token);
      assert.equal(page.status, 200);
      listed.push(
        ...(page.body.data as Array<{ id: string; title: string }>)
          .filter((n) => n.title.startsWith('Lock '))
          .map((n) => n.id),
      );
    }
    assert.deepEqual([...listed].sort(), [...ids].sort());
  });
});
