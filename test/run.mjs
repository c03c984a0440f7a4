// Runs every test file under test/ with node's test runner (tsx for TypeScript). Node 20
// cannot take quoted globs, so the files are listed here.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { chromiumPath } from './helpers/chromium-path.mjs';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'helpers' ? [] : find(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : find('test').sort();
// The browser tests' Chromium is found (and unpacked, the first time) once, before any test runs.
// When it cannot be, the browser tests fail and say why; the others still run.
try {
  process.env.GANTRY_TEST_CHROMIUM = await chromiumPath();
} catch {
  // Left to the browser tests, which fail with the reason.
}
// GANTRY_TEST_ENGINE=postgres: one throwaway PostgreSQL server for the whole run; each test
// app copies its own database from a migrated template on it (docs/postgres.md, Tests).
// test/cluster always needs it (several nodes run on PostgreSQL only).
let postgres = null;
const needsPostgres =
  process.env.GANTRY_TEST_ENGINE === 'postgres' || files.some((f) => f.split(path.sep).includes('cluster'));
if (needsPostgres && !process.env.GANTRY_TEST_DATABASE_URL) {
  const { startPostgres } = await import('./helpers/postgres-server.mjs');
  postgres = await startPostgres();
  process.env.GANTRY_TEST_DATABASE_URL = postgres.url;
}
// A hung test fails after five minutes instead of stalling the run (the slowest, the 50 CLI
// writes under load, takes well under one on a quiet machine).
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=300000', ...files],
  { stdio: 'inherit' },
);
child.on('exit', async (code, signal) => {
  await postgres?.stop();
  process.exit(code ?? (signal ? 1 : 0));
});
