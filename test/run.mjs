// Runs every test file under test/ with node's test runner, on SQLite and on PostgreSQL
// (docs/postgres.md, Tests). The TypeScript is compiled to JavaScript once, before the run, into a
// temporary directory (test/helpers/test-build.mjs), and the compiled files run without tsx.
// Node 20 cannot take quoted globs, so the files are listed here.
//
// GANTRY_TEST_ENGINE=sqlite or =postgres runs one engine, with the runner's own output; unset
// runs both halves one after the other, each with its lines prefixed by its engine.
// GANTRY_TEST_HALVES=parallel runs them at once: four test files on two cores, which on a
// loaded machine pushes spawned binaries past their start-up timeouts (docs/postgres.md,
// Test run times).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromiumPath } from './helpers/chromium-path.mjs';
import { buildTests } from './helpers/test-build.mjs';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'helpers' ? [] : find(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

const root = fileURLToPath(new URL('..', import.meta.url));
const only = process.argv.slice(2);
// Paths from the repository's root, whatever the working directory.
const fromRoot = (f) => path.relative(root, path.resolve(f));
const missing = only.filter(
  (f) => !existsSync(f) || !/^test\/.+\.test\.ts$/.test(fromRoot(f).split(path.sep).join('/')),
);
if (missing.length > 0) {
  console.error(`not a test file under test/ (*.test.ts): ${missing.join(', ')}`);
  process.exit(2);
}
const files = only.length > 0 ? only.map(fromRoot) : find(path.join(root, 'test')).map(fromRoot).sort();
const requested = process.env.GANTRY_TEST_ENGINE;
if (requested && requested !== 'sqlite' && requested !== 'postgres') {
  console.error(`GANTRY_TEST_ENGINE must be sqlite or postgres (unset runs both), not ${requested}`);
  process.exit(2);
}
const engines = requested ? [requested] : ['sqlite', 'postgres'];
const atOnce = process.env.GANTRY_TEST_HALVES === 'parallel';

// The browser tests' Chromium is found (and unpacked, the first time) once, before any test runs.
// When it cannot be, the browser tests fail and say why; the others still run.
try {
  process.env.GANTRY_TEST_CHROMIUM = await chromiumPath();
} catch {
  // Left to the browser tests, which fail with the reason.
}

// The PostgreSQL half, and test/cluster (several nodes run on PostgreSQL only) under either
// engine: one throwaway server for the whole run; each test app copies its own database from a
// migrated template on it. A server that cannot be started fails the run here, saying what is
// missing: the half is never skipped.
const isClusterFile = (f) => f.split(path.sep).includes('cluster');
/**
 * Whether a file reaches a Gantry database at all: through a test app, a kernel, the built
 * binary or the CLI (the helpers that open one). One that does not (a pure unit, the MCP
 * conformance suite against its upstream alone) answers the same on either engine, so it runs
 * in one half only.
 */
const DATABASE_PATHS =
  /createTestApp|createAppContext|createKernel|openDatabase|openConfiguredDatabase|testDatabaseEnv|testEnvFor|spawnGantry|startGantry|startCluster|runBin|runCli|withApp|helpers\/(app|cli|spawn|postgres)\.js/;
const usesDatabase = (f) => DATABASE_PATHS.test(readFileSync(path.join(root, f), 'utf8'));
let postgres = null;
let testBuild = null;
const stopPostgres = async () => {
  await postgres?.stop();
  postgres = null;
};
// Whatever ends the run (a signal, a failed start, the end) removes the build.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => stopPostgres().then(() => process.exit(130)));
process.once('exit', () => testBuild?.remove());
try {
  testBuild = buildTests(root);
} catch (err) {
  console.error(`cannot compile the tests: ${err.message}`);
  process.exit(1);
}
/** A test file's compiled copy in the build. */
const compiled = (f) => path.join(testBuild.dir, f).replace(/\.ts$/, '.js');
if ((engines.includes('postgres') || files.some(isClusterFile)) && !process.env.GANTRY_TEST_DATABASE_URL) {
  const { startPostgres } = await import('./helpers/postgres-server.mjs');
  try {
    postgres = await startPostgres();
  } catch (err) {
    console.error(`cannot run the PostgreSQL tests: ${err.message}`);
    process.exit(1);
  }
}

/**
 * One engine's half. A hung test fails after five minutes instead of stalling the run (the
 * slowest, the 50 CLI writes under load, takes well under one on a quiet machine).
 */
function runHalf(engine, prefixed) {
  const env = { ...process.env, GANTRY_TEST_ENGINE: engine };
  if (postgres) env.GANTRY_TEST_DATABASE_URL = postgres.url;
  // test/cluster is PostgreSQL whatever the engine: run once, in the PostgreSQL half when there is one.
  const both = engines.length > 1;
  const own = files.filter((f) =>
    engine === 'sqlite' ? !(both && isClusterFile(f)) : !both || isClusterFile(f) || usesDatabase(f),
  );
  const started = Date.now();
  const child = spawn(
    process.execPath,
    ['--test', '--test-concurrency=2', '--test-timeout=300000', ...own.map(compiled)],
    { stdio: prefixed ? ['ignore', 'pipe', 'pipe'] : 'inherit', env },
  );
  const counts = {};
  if (prefixed) {
    for (const [stream, out] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      createInterface({ input: stream }).on('line', (line) => {
        const total = /^# (tests|pass|fail|cancelled) (\d+)$/.exec(line);
        if (total) counts[total[1]] = Number(total[2]);
        out.write(`[${engine}] ${line}\n`);
      });
    }
  }
  return new Promise((resolve) => {
    child.on('exit', (code, signal) =>
      resolve({ engine, code: code ?? (signal ? 1 : 0), seconds: Math.round((Date.now() - started) / 1000), counts }),
    );
  });
}

let results;
if (engines.length === 1) {
  results = [await runHalf(engines[0], false)];
} else if (atOnce) {
  results = await Promise.all(engines.map((engine) => runHalf(engine, true)));
} else {
  results = [];
  for (const engine of engines) results.push(await runHalf(engine, true));
}
await stopPostgres();
if (engines.length > 1) {
  for (const r of results) {
    const { tests = '?', pass = '?', fail = '?', cancelled = 0 } = r.counts;
    console.log(
      `${r.engine}: ${r.code === 0 ? 'passed' : 'FAILED'}, ${tests} tests, ${pass} pass, ${fail} fail, ${cancelled} cancelled, ${r.seconds} s`,
    );
  }
}
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
