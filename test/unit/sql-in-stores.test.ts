import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const check = (folder: string) =>
  spawnSync(process.execPath, [path.join(root, 'scripts/check-sql-in-stores.mjs'), folder], {
    cwd: root,
    encoding: 'utf8',
  });

describe('scripts/check-sql-in-stores.mjs', () => {
  const fixture = mkdtempSync(path.join(tmpdir(), 'gantry-sql-check-'));
  after(() => rmSync(fixture, { recursive: true, force: true }));

  it('finds no SQL outside store files, migrations and the db kernel in src/', () => {
    const res = check('src');
    assert.equal(res.status, 0, res.stderr);
    assert.equal(res.stderr, '');
  });

  it('fails and names a non-store file that builds a statement, and only that file', () => {
    mkdirSync(path.join(fixture, 'things/store'), { recursive: true });
    mkdirSync(path.join(fixture, 'db'), { recursive: true });
    writeFileSync(
      path.join(fixture, 'things/service.ts'),
      "export const list = (db: any) => db.selectFrom('things').selectAll().execute();\n",
    );
    writeFileSync(
      path.join(fixture, 'things/store.ts'),
      "export const drop = (db: any) => db.deleteFrom('things').execute();\n",
    );
    writeFileSync(
      path.join(fixture, 'things/store/rows.ts'),
      "export const add = (db: any) => db.insertInto('things').values({}).execute();\n",
    );
    writeFileSync(path.join(fixture, 'db/tx.ts'), 'export const now = (sql: any) => sql`select 1`;\n');
    writeFileSync(path.join(fixture, 'things/presenters.ts'), 'export const present = (row: object) => row;\n');
    const res = check(fixture);
    assert.equal(res.status, 1);
    const listed = res.stderr
      .split('\n')
      .filter((line) => line.startsWith('  '))
      .map((line) => path.relative(fixture, line.trim()));
    assert.deepEqual(listed, [path.join('things', 'service.ts')]);
  });
});
