import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runBin, spawnGantry } from '../helpers/spawn.js';
import { TEST_ENV } from '../helpers/app.js';

/** The environment a process was started with (Linux /proc). */
function environment(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
}

/** The arguments a process was started with (Linux /proc). */
function commandLine(pid: number): string[] {
  assert.ok(existsSync(`/proc/${pid}/cmdline`), 'this test reads /proc/<pid>/cmdline: it needs Linux');
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

describe('the launcher (docs/operations.md, Memory)', () => {
  it('starts `bin/gantry serve` as one node process with its memory flags', async () => {
    const g = await spawnGantry({ asExecutable: true });
    try {
      const args = commandLine(g.proc.pid!);
      // The shell part replaced itself with node: the spawned pid is the server itself.
      assert.match(args[0], /(^|\/)node[^/]*$/, args.join(' '));
      assert.ok(args.includes('--max-semi-space-size=2'), `launched as: ${args.join(' ')}`);
      assert.ok(args.indexOf('--max-semi-space-size=2') < args.indexOf('serve'), args.join(' '));
      assert.ok(environment(g.proc.pid!).includes('MALLOC_ARENA_MAX=2'));
      assert.equal((await fetch(`${g.url}/healthz`)).status, 200);
    } finally {
      assert.equal(await g.stop(), 0);
    }
  });

  it("keeps the operator's own MALLOC_ARENA_MAX", async () => {
    const g = await spawnGantry({ asExecutable: true, env: { MALLOC_ARENA_MAX: '4' } });
    try {
      assert.ok(environment(g.proc.pid!).includes('MALLOC_ARENA_MAX=4'));
    } finally {
      assert.equal(await g.stop(), 0);
    }
  });

  it('never loads node-postgres on SQLite (docs/operations.md, Memory)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gantry-launcher-'));
    try {
      // NODE_DEBUG=module: node tells every module it loads from a file, on stderr.
      const res = await runBin(['user', 'create', '--email', 'pg@example.test', '--password', 'a password 123'], {
        ...TEST_ENV,
        GANTRY_DATA_DIR: dir,
        GANTRY_DATABASE_URL: '',
        NODE_DEBUG: 'module',
      });
      assert.equal(res.code, 0, res.stderr.slice(-2000));
      assert.match(res.stderr, /node_modules\/better-sqlite3\//, 'the module log lists what was loaded');
      assert.doesNotMatch(res.stderr, /node_modules\/pg\//);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('still runs as a script given to node (`node bin/gantry`)', async () => {
    const g = await spawnGantry();
    try {
      assert.equal((await fetch(`${g.url}/healthz`)).status, 200);
    } finally {
      assert.equal(await g.stop(), 0);
    }
  });
});
