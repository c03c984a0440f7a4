// Bundles the appliance into one CommonJS file. better-sqlite3 stays external: its native
// addon is loaded from node_modules beside the bundle.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/gantry.cjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  external: ['better-sqlite3'],
  // import.meta.url is not defined in CJS output; libraries that read it get the bundle's own URL.
  define: { 'import.meta.url': 'importMetaUrl' },
  banner: { js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
