import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const checker = path.join(root, 'scripts', 'check-cycles.mjs');
const check = (dir?: string) =>
  spawnSync(process.execPath, [checker, ...(dir ? [dir] : [])], { cwd: root, encoding: 'utf8' });

describe('scripts/check-cycles.mjs', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gantry-cycles-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  };

  it('fails on a cycle and names its files; type-only imports do not count', () => {
    write('tree/alpha.ts', "import { beta } from './deep/beta.js';\nexport const alpha = () => beta;\n");
    write('tree/deep/beta.ts', "export { gamma as beta } from '../gamma.js';\n");
    write('tree/gamma.ts', "import {\n  alpha,\n} from './alpha.js';\nexport const gamma = () => alpha;\n");
    write(
      'tree/typed.ts',
      "import type { alpha } from './alpha.js';\nimport { type gamma } from './gamma.js';\nexport type T = typeof alpha | typeof gamma;\n",
    );
    write('tree/leaf.ts', "import type { T } from './typed.js';\nexport const leaf = 1 as unknown as T;\n");
    write(
      'tree/alpha-user.ts',
      "import { leaf } from './leaf.js';\nimport { alpha } from './alpha.js';\nexport const both = [leaf, alpha];\n",
    );
    const run = check(path.join(dir, 'tree'));
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /1 import cycle/);
    const line = run.stderr.split('\n').find((l) => l.includes(' -> '))!;
    for (const name of ['alpha.ts', 'deep/beta.ts', 'gamma.ts']) assert.ok(line.includes(name), `${name} in ${line}`);
    for (const name of ['typed.ts', 'leaf.ts', 'alpha-user.ts'])
      assert.ok(!run.stderr.includes(name), `${name} is in no cycle`);
  });

  it('passes on a tree without cycles', () => {
    write('clean/a.ts', "import { b } from './b.js';\nexport const a = b;\n");
    write('clean/b.ts', "import type { a } from './a.js';\nexport const b = 1;\nexport type A = typeof a;\n");
    const run = check(path.join(dir, 'clean'));
    assert.equal(run.status, 0, run.stdout + run.stderr);
  });

  it('finds no cycle in src/', () => {
    const run = check();
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /no import cycle/);
  });
});
