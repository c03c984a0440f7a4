// `npm run bench`: the kernel's benchmark first, then every other bench/*.bench.ts, one after
// another (never in parallel: they would share the two cores). Each is its own process.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const others = readdirSync(dir)
  .filter((name) => name.endsWith('.bench.ts') && name !== 'kernel.bench.ts')
  .sort();
const failed: string[] = [];
for (const name of ['kernel.bench.ts', ...others]) {
  console.log(`\n=== ${name} ===`);
  const res = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, name)], {
    stdio: 'inherit',
    timeout: 300_000,
  });
  if (res.status !== 0) failed.push(`${name} (${res.signal ?? `exit ${res.status}`})`);
}
if (failed.length > 0) {
  console.error(`\nfailed: ${failed.join(', ')}`);
  process.exit(1);
}
