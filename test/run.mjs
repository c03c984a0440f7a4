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
//
// --quick (`npm run test:quick`) is the edit loop's run: SQLite only, without the browser tests,
// the MCP conformance suite and test/cluster (PostgreSQL only); README.md, Tests.
// After each half the runner prints its slowest processes (test/helpers/file-times.mjs), and at the end
// every failed test again with its error (test/helpers/failures-reporter.mjs).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
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
const quick = process.argv.includes('--quick');
const only = process.argv.slice(2).filter((a) => a !== '--quick');
// Paths from the repository's root, whatever the working directory.
const fromRoot = (f) => path.relative(root, path.resolve(f));
const missing = only.filter(
  (f) => !existsSync(f) || !/^test\/.+\.test\.ts$/.test(fromRoot(f).split(path.sep).join('/')),
);
if (missing.length > 0) {
  console.error(`not a test file under test/ (*.test.ts): ${missing.join(', ')}`);
  process.exit(2);
}
const listed = only.length > 0 ? only.map(fromRoot) : find(path.join(root, 'test')).map(fromRoot).sort();
const requested = process.env.GANTRY_TEST_ENGINE;
if (requested && requested !== 'sqlite' && requested !== 'postgres') {
  console.error(`GANTRY_TEST_ENGINE must be sqlite or postgres (unset runs both), not ${requested}`);
  process.exit(2);
}
if (quick && requested === 'postgres') {
  console.error('--quick runs SQLite only: leave GANTRY_TEST_ENGINE unset (or sqlite)');
  process.exit(2);
}
const engines = quick ? ['sqlite'] : requested ? [requested] : ['sqlite', 'postgres'];
const atOnce = process.env.GANTRY_TEST_HALVES === 'parallel';

const source = (f) => readFileSync(path.join(root, f), 'utf8');
const isClusterFile = (f) => f.split(path.sep).includes('cluster');
/** The page tests in a real browser, and the runs of the MCP conformance suite (under Node 22). */
const usesBrowser = (f) => /helpers\/browser\.js/.test(source(f));
const usesConformance = (f) => /helpers\/conformance\.js/.test(source(f));
const leftOut = quick ? listed.filter((f) => isClusterFile(f) || usesBrowser(f) || usesConformance(f)) : [];
const files = listed.filter((f) => !leftOut.includes(f));
if (leftOut.length > 0)
  console.log(`--quick: SQLite only; left out (browser, conformance suite, PostgreSQL only): ${leftOut.join(' ')}`);

// The browser tests' Chromium is found (and unpacked, the first time) once, before any test runs.
// When it cannot be, the browser tests fail and say why; the others still run.
if (files.some(usesBrowser)) {
  try {
    process.env.GANTRY_TEST_CHROMIUM = await chromiumPath();
  } catch {
    // Left to the browser tests, which fail with the reason.
  }
}

// The PostgreSQL half, and test/cluster (several nodes run on PostgreSQL only) under either
// engine: one throwaway server for the whole run; each test app copies its own database from a
// migrated template on it. A server that cannot be started fails the run here, saying what is
// missing: the half is never skipped.
/**
 * Whether a file reaches a Gantry database at all: through a test app, a kernel, the built
 * binary or the CLI (the helpers that open one). One that does not (a pure unit, the MCP
 * conformance suite against its upstream alone) answers the same on either engine, so it runs
 * in one half only.
 */
const DATABASE_PATHS =
  /createTestApp|createAppContext|createKernel|openDatabase|openConfiguredDatabase|testDatabaseEnv|testEnvFor|spawnGantry|startGantry|startCluster|runBin|runCli|withApp|helpers\/(app|cli|spawn|postgres)\.js/;
const usesDatabase = (f) => DATABASE_PATHS.test(source(f));
let postgres = null;
let testBuild = null;
const stopPostgres = async () => {
  await postgres?.stop();
  postgres = null;
};
// Whatever ends the run (a signal, a failed start, the end) removes the build.
/** The halves' test runners now running: a signal to this runner stops them (and they their files). */
const runners = new Set();
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    for (const runner of runners) runner.kill('SIGTERM');
    stopPostgres().then(() => process.exit(130));
  });
process.once('exit', () => testBuild?.remove());
try {
  testBuild = buildTests(root, files);
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
/**
 * Test files at once in a half: three on two cores, since the end-to-end files spend much of
 * their time waiting on the processes they start (docs/postgres.md, Test run times).
 */
const CONCURRENCY = 3;

/**
 * Test files run several to a process, in groups of up to this many: each process loads the
 * bundled app once (about 0.5 s of CPU) instead of once per file (docs/postgres.md, Test run
 * times). A file's top-level suites still run one after the other, as in a process of its own.
 */
const GROUP_SIZE = 12;
/**
 * Per-test hooks at a file's top level belong to the process's root, so they would run around
 * other files' tests too. (A top-level `before` or `after` runs once, at the process's start or
 * end: its file's tests still find what it made.)
 */
const ROOT_EACH_HOOKS = /^(beforeEach|afterEach)\(/m;
/**
 * The files that share a process: those that only call the app in-process (test/http, test/unit,
 * test/db, test/cli) and have no top-level per-test hooks. The end-to-end, browser, conformance and
 * cluster files keep a process each: they wait on the processes they start, and run at once.
 */
const groupable = (f) =>
  /^test\/(http|unit|db|cli)\//.test(f.split(path.sep).join('/')) &&
  !usesBrowser(f) &&
  !usesConformance(f) &&
  !ROOT_EACH_HOOKS.test(source(f));

/**
 * The entry files of a half's processes: each groupable file imported by a group's entry (dealt
 * largest first, so the groups take about as long), every other file on its own. The groups'
 * entries sort after test/e2e, so the long end-to-end files start first.
 */
function entries(engine, own) {
  const grouped = own.filter(groupable).sort((a, b) => source(b).length - source(a).length);
  const count = Math.ceil(grouped.length / GROUP_SIZE);
  const groups = Array.from({ length: count }, () => []);
  grouped.forEach((f, i) => groups[i % count].push(f));
  const dir = path.join(testBuild.dir, 'test', 'zz-groups');
  mkdirSync(dir, { recursive: true });
  const groupEntries = groups.map((members, i) => {
    const entry = path.join(dir, `${engine}-${String(i + 1).padStart(2, '0')}.test.js`);
    writeFileSync(entry, members.map((f) => `import ${JSON.stringify(pathToFileURL(compiled(f)).href)};\n`).join(''));
    groupMembers.set(entry, members);
    return entry;
  });
  return [...own.filter((f) => !grouped.includes(f)).map(compiled), ...groupEntries];
}
/** A group entry's files, for the slowest-files report. */
const groupMembers = new Map();

function runHalf(engine, prefixed) {
  const env = { ...process.env, GANTRY_TEST_ENGINE: engine };
  if (postgres) env.GANTRY_TEST_DATABASE_URL = postgres.url;
  // test/cluster is PostgreSQL whatever the engine: run once, in the PostgreSQL half when there is one.
  const both = engines.length > 1;
  const own = files.filter((f) =>
    engine === 'sqlite' ? !(both && isClusterFile(f)) : !both || isClusterFile(f) || usesDatabase(f),
  );
  // `node --test` given no file looks for test files under the working directory, this runner
  // among them: a half with nothing to run (only units named, or all left out by --quick) ends here.
  if (own.length === 0) {
    console.log(`${engine}: no test file of this run belongs to this half`);
    return Promise.resolve({ engine, code: 0, seconds: 0, counts: { tests: 0, pass: 0, fail: 0 }, failures: [] });
  }
  env.GANTRY_TEST_TIMES = path.join(testBuild.dir, `times-${engine}.jsonl`);
  const failuresFile = path.join(testBuild.dir, `failures-${engine}.jsonl`);
  // The OpenAPI documents of the test apps' checks, built once per configuration for the whole
  // run (sharedDocument in test/helpers/openapi-check.ts).
  env.GANTRY_TEST_OPENAPI_CACHE = path.join(testBuild.dir, 'openapi');
  // The migrated SQLite database the test apps copy (test/helpers/sqlite-template.ts).
  env.GANTRY_TEST_SQLITE_TEMPLATE = path.join(testBuild.dir, 'sqlite-template.db');
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      `--import=${new URL('./helpers/file-times.mjs', import.meta.url)}`,
      '--test',
      `--test-concurrency=${CONCURRENCY}`,
      '--test-timeout=300000',
      // The usual report on the output, and the failures into a file, printed again at the end.
      `--test-reporter=${!prefixed && process.stdout.isTTY ? 'spec' : 'tap'}`,
      '--test-reporter-destination=stdout',
      `--test-reporter=${new URL('./helpers/failures-reporter.mjs', import.meta.url)}`,
      `--test-reporter-destination=${failuresFile}`,
      ...entries(engine, own),
    ],
    { stdio: prefixed ? ['ignore', 'pipe', 'pipe'] : 'inherit', env },
  );
  runners.add(child);
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
    child.on('exit', (code, signal) => {
      runners.delete(child);
      for (const line of slowest(env.GANTRY_TEST_TIMES)) console.log(prefixed ? `[${engine}] ${line}` : line);
      resolve({
        engine,
        code: code ?? (signal ? 1 : 0),
        seconds: Math.round((Date.now() - started) / 1000),
        counts,
        failures: failed(failuresFile),
      });
    });
  });
}

/** The failed tests of a half, from the lines test/helpers/failures-reporter.mjs wrote. */
function failed(failuresFile) {
  if (!existsSync(failuresFile)) return [];
  return readFileSync(failuresFile, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .map((f) => ({ ...f, file: f.file && path.relative(testBuild.dir, f.file).replace(/\.js$/, '.ts') }));
}

/**
 * The ten slowest processes of a half (a file, or a group of files), from the lines
 * test/helpers/file-times.mjs wrote.
 */
function slowest(timesFile) {
  if (!existsSync(timesFile)) return [];
  const times = readFileSync(timesFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .sort((a, b) => b.ms - a.ms);
  const seconds = (ms) => (ms / 1000).toFixed(1).padStart(6);
  const cpu = times.reduce((sum, t) => sum + t.cpuMs, 0);
  const label = (file) => {
    const members = groupMembers.get(file);
    if (!members) return path.relative(testBuild.dir, file).replace(/\.js$/, '.ts');
    return `${members.length} files: ${members.map((f) => path.basename(f, '.test.ts')).join(' ')}`;
  };
  return [
    `slowest processes of ${times.length} (wall s, CPU s with the processes each started; all CPU ${Math.round(cpu / 1000)} s):`,
    ...times.slice(0, 10).map((t) => `${seconds(t.ms)} ${seconds(t.cpuMs)}  ${label(t.file)}`),
  ];
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
for (const r of results)
  for (const f of r.failures)
    console.log(`FAILED (${r.engine}) ${f.file ?? '?'}: ${f.name}\n  ${f.error.replaceAll('\n', '\n  ')}`);
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
