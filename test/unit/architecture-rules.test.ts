import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The architecture's rules (docs/architecture.md, Rules): the tree keeps them, and each one
// fails on the violation it names, in a throwaway tree of its own.
// The repository itself, not the test run's compiled mirror of src/ (whose .js files would be
// what the imports resolve to): the mirror links every other top-level entry to it.
const root = path.dirname(realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));
const depcruiseBin = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const biomeBin = path.join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: Array<{ name: string }>;
}

/** dependency-cruiser with the project's configuration over `paths`, run in `cwd`: its violations. */
function cruise(cwd: string, paths: string[]): Violation[] {
  const res = spawnSync(
    process.execPath,
    [depcruiseBin, ...paths, '--config', path.join(root, '.dependency-cruiser.cjs'), '--output-type', 'json'],
    { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  assert.ok(res.stdout, `dependency-cruiser printed nothing: ${res.stderr}`);
  return (JSON.parse(res.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('the architecture rules (dependency-cruiser, Biome)', () => {
  const fixture = mkdtempSync(path.join(tmpdir(), 'gantry-architecture-'));
  after(() => rmSync(fixture, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    mkdirSync(path.dirname(path.join(fixture, name)), { recursive: true });
    writeFileSync(path.join(fixture, name), text);
  };
  write('tsconfig.json', readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));

  it('the tree keeps every rule', () => {
    assert.deepEqual(
      cruise(root, ['src', 'migrations']).map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`),
      [],
    );
  });

  it('each rule fails on what it forbids, and names the files', () => {
    // A loop of type imports only: still two files that cannot be read apart.
    write('src/connectors/alpha.ts', "import type { Beta } from './beta.js';\nexport type Alpha = Beta | 1;\n");
    write('src/connectors/beta.ts', "import type { Alpha } from './alpha.js';\nexport type Beta = Alpha[];\n");
    // The kernel naming a domain; db/schema.ts naming more than a domain's tables.
    write(
      'src/http/server.ts',
      "import { accountsPlugin } from '../accounts/plugin.js';\nexport const p = accountsPlugin;\n",
    );
    write('src/accounts/plugin.ts', 'export const accountsPlugin = 1;\n');
    write(
      'src/db/schema.ts',
      "import type { Row } from '../accounts/tables.js';\nimport { x } from '../accounts/store.js';\nexport type DB = Row & typeof x;\n",
    );
    write('src/accounts/tables.ts', 'export type Row = { id: string };\n');
    write('src/accounts/store.ts', "import { sql } from 'kysely';\nexport const x = sql`select 1`;\n");
    // The composition root imported; another domain's private file reached; kysely in a service.
    write('src/app.ts', 'export const app = 1;\n');
    write('src/cli/serve.ts', "import { app } from '../app.js';\nexport const serve = app;\n");
    write(
      'src/mcp/calls.ts',
      "import { relay } from '../connectors/mcp.js';\nimport { open } from '../connectors/service.js';\nexport const c = [relay, open];\n",
    );
    write('src/connectors/mcp.ts', 'export const relay = 1;\n');
    write('src/connectors/service.ts', "import { sql } from 'kysely';\nexport const open = sql`select 1`;\n");
    write('package.json', '{"name":"fixture","type":"module","dependencies":{"kysely":"*"}}\n');
    write('node_modules/kysely/package.json', '{"name":"kysely","main":"index.js"}\n');
    write('node_modules/kysely/index.js', 'exports.sql = () => null;\n');

    const found = cruise(fixture, ['src'])
      .map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)
      .sort();
    const expect = (line: RegExp) =>
      assert.ok(
        found.some((f) => line.test(f)),
        `${line} not in:\n${found.join('\n')}`,
      );
    expect(/^no-cycle: src\/connectors\/(alpha|beta)\.ts -> src\/connectors\/(alpha|beta)\.ts$/);
    expect(/^kernel-knows-no-domain: src\/http\/server\.ts -> src\/accounts\/plugin\.ts$/);
    expect(/^schema-knows-only-tables: src\/db\/schema\.ts -> src\/accounts\/store\.ts$/);
    expect(/^nothing-imports-the-composition-root: src\/cli\/serve\.ts -> src\/app\.ts$/);
    expect(/^domains-meet-through-their-public-files: src\/mcp\/calls\.ts -> src\/connectors\/mcp\.ts$/);
    expect(/^sql-only-in-stores: src\/connectors\/service\.ts -> node_modules\/kysely\//);
    // What the rules allow: a domain's service, a store's kysely, schema.ts on tables.ts.
    assert.ok(!found.some((f) => f.includes('-> src/connectors/service.ts')), found.join('\n'));
    assert.ok(!found.some((f) => f.startsWith('sql-only-in-stores: src/accounts/store.ts')), found.join('\n'));
    assert.ok(!found.some((f) => f.endsWith('-> src/accounts/tables.ts')), found.join('\n'));
  });

  it('Biome refuses a statement built outside a store, not inside one', () => {
    const biome = JSON.parse(readFileSync(path.join(root, 'biome.json'), 'utf8')) as {
      overrides: Array<{ plugins: string[] }>;
    };
    for (const o of biome.overrides) o.plugins = o.plugins.map((p) => path.join(root, p));
    write('biome.json', JSON.stringify({ ...biome, $schema: undefined, vcs: { enabled: false } }));
    write('src/things/service.ts', "export const list = (db: any) => db.selectFrom('things').selectAll().execute();\n");
    write('src/things/store.ts', "export const drop = (db: any) => db.deleteFrom('things').execute();\n");
    write(
      'src/things/store/rows.ts',
      "export const add = (db: any) => db.insertInto('things').values({}).execute();\n",
    );
    write('src/db/engine.ts', "export const raw = (db: any) => db.updateTable('things').set({}).execute();\n");
    const res = spawnSync(biomeBin, ['lint', '--reporter=json', 'src/things', 'src/db'], {
      cwd: fixture,
      encoding: 'utf8',
    });
    const report = JSON.parse(res.stdout) as { diagnostics: Array<{ location: { path: string }; message: string }> };
    const paths = report.diagnostics.map((d) =>
      typeof d.location.path === 'string' ? d.location.path : JSON.stringify(d.location.path),
    );
    assert.equal(res.status, 1, res.stdout);
    assert.deepEqual(
      paths.map((p) => p.replace(/^.*?src\//, 'src/')),
      ['src/things/service.ts'],
    );
    assert.match(report.diagnostics[0].message, /SQL outside a store/);
  });

  it('the picture in docs/architecture.md is the current one (npm run architecture redraws it)', async () => {
    const { architectureGraph, withGraph } = (await import(path.join(root, 'scripts', 'architecture.mjs'))) as {
      architectureGraph(): string;
      withGraph(doc: string, graph: string): string;
    };
    const doc = readFileSync(path.join(root, 'docs', 'architecture.md'), 'utf8');
    assert.equal(withGraph(doc, architectureGraph()), doc, 'docs/architecture.md: run `npm run architecture`');
  });
});
