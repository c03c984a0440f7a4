// Bundles the appliance into one CommonJS file. better-sqlite3 stays external: its native
// addon is loaded from node_modules beside the bundle (which ships with it, install.sh).
import { build } from 'esbuild';

await build({
  // The JSON Schema worker is a file of its own beside the bundle: a worker thread loads only
  // what it runs (ajv, re2js), not the whole appliance (src/connectors/json-schema/engine.ts).
  entryPoints: { gantry: 'src/main.ts', 'json-schema-worker': 'src/connectors/json-schema/worker.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  // Whitespace and syntax only: the bundle's source stays in memory for the process's life, so
  // a smaller one is a smaller idle footprint; identifiers keep their names for stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  // The MCP SDKs, Stripe's, nodemailer, node-postgres and OpenTelemetry are imported only when
  // first used (an MCP request, a payment, a mail to send, a PostgreSQL database, a traces
  // endpoint set): left out of the bundle, they are loaded from node_modules then, and an idle
  // server does not keep their source in memory (docs/operations.md, Memory). @opentelemetry/api
  // goes with them: one copy for prom-client (which loads it) and the SDK alike.
  external: [
    'better-sqlite3',
    'pg',
    'pg-native',
    '@modelcontextprotocol/*',
    '@opentelemetry/*',
    'stripe',
    'nodemailer',
  ],
  // import.meta.url is not defined in CJS output; libraries that read it get the bundle's own URL.
  define: {
    'import.meta.url': 'importMetaUrl',
    GANTRY_JSON_SCHEMA_WORKER: JSON.stringify('./json-schema-worker.cjs'),
    // Only the TypeScript sources under tsx resolve with it (the schema worker's loader); the
    // bundle never reaches that code, and CJS output has no import.meta.resolve.
    'import.meta.resolve': 'undefined',
  },
  banner: { js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
