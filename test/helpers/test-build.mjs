// The test run's build: src/, test/ and migrations/ compiled to plain JavaScript once, before any
// test file starts. Every test file is its own process, and loading the test app through tsx's
// loader compiles its whole import graph again in each one: most of the run's CPU
// (docs/postgres.md, Test run times).
//
// The build directory mirrors the repository: beside each compiled .js file lies its .ts source
// (tests that scan src/**/*.ts, or start a .ts child with `--import tsx`), every other file of
// the three directories is copied, and every other top-level entry (bin, node_modules,
// test-results, ...) is a link to the repository's own, so `new URL('../../bin/gantry',
// import.meta.url)` from a compiled test still reaches the repository's files.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';

const COMPILED = ['src', 'test', 'migrations'];

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

/**
 * Builds the mirror of `root` in a fresh temporary directory. Returns its path and `remove`,
 * which deletes it; the caller removes it however the run ends. Synchronous, so a signal during
 * the build is handled once the caller holds `remove`.
 */
export function buildTests(root) {
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
    buildSync({
      entryPoints: sources.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
      outdir: dir,
      outbase: root,
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'warning',
    });
  } catch (err) {
    remove();
    throw err;
  }
  return { dir, remove };
}
