#!/usr/bin/env node
// Every SQL statement lives in a store: a file named store.ts or under a store/ folder, or the
// db kernel (src/db/). Lists every other file under the given folder (default src) that builds
// a statement, and exits 1 if there is any.
//   node scripts/check-sql-in-stores.mjs [folder]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const SQL = /selectFrom|insertInto|updateTable|deleteFrom|sql`/;
const STORE = /store(\.ts|\/)/;

// The TypeScript sources only: the test run's compiled copy of src/ (test/helpers/test-build.mjs)
// has a .js file beside each, which is not where a statement is written.
function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

const root = process.argv[2] ?? 'src';
const offending = files(root)
  .map((file) => ({ file, rel: path.relative(root, file).split(path.sep).join('/') }))
  .filter(({ rel }) => !STORE.test(rel) && !rel.startsWith('db/'))
  .filter(({ file }) => SQL.test(readFileSync(file, 'utf8')))
  .map(({ file }) => file)
  .sort();

if (offending.length > 0) {
  console.error(
    `SQL outside a store file (move it to the domain's store.ts or store/):\n${offending.map((f) => `  ${f}`).join('\n')}`,
  );
  process.exit(1);
}
