// The test run's build: src/, test/ and migrations/ compiled to plain JavaScript once, before any
// test file starts, and each test file to run bundled with what it imports. Every test file is its
// own process: loading the test app through tsx's loader compiled its whole import graph again in
// each one, and loading it as some 650 separate modules (ours and node_modules') still took about
// 1.1 s of CPU per process; bundled, about 0.5 s (docs/postgres.md, Test run times).
//
// The build directory mirrors the repository: beside each compiled .js file lies its .ts source
// (tests that scan src/**/*.ts, or start a .ts child with `--import tsx`), every other file of
// the three directories is copied, and every other top-level entry (bin, node_modules,
// test-results, ...) is a link to the repository's own, so `new URL('../../bin/gantry',
// import.meta.url)` from a compiled test still reaches the repository's files.
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync, transformSync } from 'esbuild';

const COMPILED = ['src', 'test', 'migrations'];

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

/**
 * Compiles `source` to `output` again with its own URL written in place of `import.meta.url`: the
 * same value where the file runs on its own (a worker, a tsx child's import), and the value it
 * needs once bundled into a test file or a shared chunk, whose own URL is another one.
 */
function pinImportMetaUrl(source, output) {
  const text = readFileSync(source, 'utf8');
  if (!text.includes('import.meta.url')) return;
  const { code } = transformSync(text, {
    loader: source.endsWith('.ts') ? 'ts' : 'js',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(output).href) },
  });
  writeFileSync(output, code);
}

/**
 * The packages a bundle leaves to node_modules: the devDependencies (test tools with binaries or
 * files of their own: Chromium, esbuild, PostgreSQL, the conformance suite), better-sqlite3 (a
 * native addon) and pg's optional native binding. The runtime dependencies are bundled, as the
 * appliance's own bundle does (build.mjs).
 */
function externals(root) {
  const { devDependencies = {} } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  return [...Object.keys(devDependencies), 'better-sqlite3', 'pg-native'].flatMap((name) => [name, `${name}/*`]);
}

/**
 * Builds the mirror of `root` in a fresh temporary directory, and bundles the test files `tests`
 * (paths from the root) in place of their compiled copies: one ESM file each, the modules they
 * share split into chunks under `_chunks/`, so each module is still loaded once per process.
 * Returns the directory's path and `remove`, which deletes it; the caller removes it however the
 * run ends. Synchronous, so a signal during the build is handled once the caller holds `remove`.
 */
export function buildTests(root, tests) {
  const dir = mkdtempSync(path.join(tmpdir(), 'gantry-tests-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    for (const name of readdirSync(root)) {
      if (!COMPILED.includes(name)) symlinkSync(path.join(root, name), path.join(dir, name));
    }
    const sources = COMPILED.flatMap((name) => filesUnder(path.join(root, name)));
    for (const file of sources) {
      const copy = path.join(dir, path.relative(root, file));
      mkdirSync(path.dirname(copy), { recursive: true });
      copyFileSync(file, copy);
    }
    const typescript = sources.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
    buildSync({
      entryPoints: typescript,
      outdir: dir,
      outbase: root,
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'warning',
    });
    for (const file of sources.filter((f) => /\.(ts|mjs)$/.test(f) && !f.endsWith('.d.ts')))
      pinImportMetaUrl(file, path.join(dir, path.relative(root, file)).replace(/\.ts$/, '.js'));
    if (tests.length > 0)
      buildSync({
        entryPoints: tests.map((f) => path.join(dir, f).replace(/\.ts$/, '.js')),
        outdir: dir,
        outbase: dir,
        allowOverwrite: true,
        bundle: true,
        splitting: true,
        chunkNames: '_chunks/[name]-[hash]',
        external: externals(root),
        format: 'esm',
        platform: 'node',
        target: 'node20',
        // The bundled CommonJS packages require Node's modules and the packages left outside.
        banner: {
          js: "import { createRequire as gantryCreateRequire } from 'node:module'; const require = gantryCreateRequire(import.meta.url);",
        },
        logLevel: 'warning',
      });
  } catch (err) {
    remove();
    throw err;
  }
  return { dir, remove };
}
