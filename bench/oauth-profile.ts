// Where the refresh grant spends its CPU (docs/oauth.md, Performance): the built binary under
// `--cpu-prof` while 20 refresh chains (bench/lib.ts, RefreshChains) run for BENCH_DURATION
// seconds (default 10), then the profile summed by place (package) and by function.
// Loopback only, bounded.
//   node --import tsx bench/oauth-profile.ts [--top N] [--postgres]
// --postgres: on a throwaway PostgreSQL server (test/helpers/postgres-server.mjs), durable.
import { SourceMap } from 'node:module';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import {
  benchSeconds,
  freePort,
  mintRefreshChains,
  pinLoadGenerator,
  RefreshChains,
  requireBuilt,
  startOnServerCore,
} from './lib.js';
import { startPostgres } from '../test/helpers/postgres-server.mjs';
import { parentsOf, type ProfileNode, shareOf, sumBy } from './profile-sums.js';

pinLoadGenerator(import.meta.url);
requireBuilt();
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const top = Number(process.argv[process.argv.indexOf('--top') + 1]) || 40;
const onPostgres = process.argv.includes('--postgres');
const { duration } = benchSeconds({ warmup: 3, duration: 10 });
const home = mkdtempSync(path.join(tmpdir(), 'gantry-oauth-profile-'));
const profiles = path.join(home, 'profiles');
const pg = onPostgres ? await startPostgres({ durable: true }) : null;
try {
  const port = await freePort();
  const env: Record<string, string> = {
    GANTRY_DATA_DIR: path.join(home, 'data'),
    GANTRY_PORT: String(port),
    GANTRY_PUBLIC_URL: `http://127.0.0.1:${port}`,
    GANTRY_LOG_LEVEL: 'warn',
    GANTRY_RATE_LIMIT_MULTIPLIER: '100000',
    GANTRY_SCRYPT_COST: '1024',
    ...(pg ? { GANTRY_DATABASE_URL: pg.url } : {}),
  };
  const { authorization, seeds } = await mintRefreshChains(env, 200);
  const gantry = await startOnServerCore(
    ['--cpu-prof', `--cpu-prof-dir=${profiles}`, path.join(ROOT, 'bin/gantry'), 'serve'],
    /gantry listening on/,
    'gantry',
    env,
  );
  const chains = new RefreshChains(`http://127.0.0.1:${port}/api/v1/oauth/token`, authorization, seeds);
  const result = await autocannon({ ...chains.options(), connections: 20, duration });
  console.log(
    `refresh grant${pg ? ' on PostgreSQL' : ''}: ${Math.round(result['2xx'] / duration)} 2xx/s, non-2xx ${result.non2xx}`,
  );
  await gantry.stop();
} finally {
  await pg?.stop();
}

type Node = ProfileNode;
// The bundle's frames named by their TypeScript source (dist/gantry.cjs.map).
const bundleMap = new SourceMap(JSON.parse(readFileSync(path.join(ROOT, 'dist/gantry.cjs.map'), 'utf8')));
const source = (n: Node) => {
  const entry = bundleMap.findEntry(n.callFrame.lineNumber, n.callFrame.columnNumber) as {
    originalSource?: string;
    originalLine?: number;
  };
  if (!entry.originalSource) return 'gantry';
  const file = entry.originalSource.replace(/^.*?(src\/|node_modules\/)/, '$1');
  return `${file}:${(entry.originalLine ?? 0) + 1}`;
};
const file = readdirSync(profiles).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`no profile written in ${profiles}`);
const profile = JSON.parse(readFileSync(path.join(profiles, file), 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
// --keep FILE: the profile is copied there (for a closer look in Chrome's DevTools).
const keep = process.argv.includes('--keep') ? process.argv[process.argv.indexOf('--keep') + 1] : null;
if (keep) copyFileSync(path.join(profiles, file), keep);
rmSync(home, { recursive: true, force: true });
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
const place = (n: Node) => {
  const url = n.callFrame.url;
  const where = url.includes('gantry.cjs') ? source(n) : url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1];
  if (pkg) return pkg;
  if (where.startsWith('src/')) return where.replace(/\/[^/]*$/, '/').replace(/:\d+$/, '');
  return where.startsWith('node:') ? where : where ? path.basename(where) : `(${n.callFrame.functionName})`;
};
const sum = (key: (n: Node) => string) => sumBy(self, byNode, key);
const pct = shareOf(total);
console.log(`\nself time by place (${(total / 1e6).toFixed(1)} s sampled):`);
for (const [k, us] of sum(place).slice(0, 25)) console.log(`${pct(us)}  ${k}`);
console.log(`\nself time by function (top ${top}):`);
const named = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.includes('gantry.cjs') ? source(n) : `${place(n)}:${n.callFrame.lineNumber}`}`;
for (const [k, us] of sum(named).slice(0, top)) console.log(`${pct(us)}  ${k}`);

// Inclusive time of the functions named on the command line (--inclusive a,b,c): self time of
// every sample under a frame of that name, each sample counted once per name.
const wanted = (process.argv[process.argv.indexOf('--inclusive') + 1] ?? '').split(',').filter(Boolean);
if (process.argv.includes('--inclusive') && wanted.length > 0) {
  const parent = parentsOf(profile.nodes);
  const inclusive = new Map<string, number>(wanted.map((w) => [w, 0]));
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = byNode.get(at)!.callFrame.functionName;
      if (inclusive.has(name) && !seen.has(name)) {
        seen.add(name);
        inclusive.set(name, inclusive.get(name)! + us);
      }
    }
  }
  console.log('\ninclusive time:');
  for (const [k, us] of inclusive) console.log(`${pct(us)}  ${k}`);
}
