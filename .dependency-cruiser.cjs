// The architecture as rules the build checks (docs/architecture.md, which has the picture):
// `npm run check` runs them (dependency-cruiser reads TypeScript's own imports, types included).
const DOMAINS = 'accounts|ai|audit|billing|connectors|identity|mcp|notifications|oauth|status|wallet';
const KERNEL = '^src/(http|db|lib|jobs)/|^src/(config[^/]*|kernel)[.]ts$';

/**
 * What a domain offers the others: its service (the use cases), its types, and these files,
 * each a seam the others need (docs/architecture.md, Domains).
 */
const PUBLIC = [
  '^src/[^/]+/(service|types)[.]ts$',
  // Who may do what in which account and workspace: every domain's authorization.
  '^src/accounts/(access|roles|workspaces)[.]ts$',
  // The seat-release seam the billing domain implements.
  '^src/accounts/billing[.]ts$',
  // The audit actions every domain records.
  '^src/audit/actions[.]ts$',
  // The sign-in budget, the browser session, its sign-in form, where identity's pages are (the
  // reset page, the account center), and the second factors' parts of a page (second step,
  // passkey buttons, step-up fields) every domain's pages share or link to.
  '^src/identity/(limits|pages|page-paths|browser-sessions|page-sign-in|page-factors)[.]ts$',
  // The MCP resource's token verifier, which the MCP endpoint runs.
  '^src/oauth/mcp-auth[.]ts$',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Modules that import each other, types included, cannot be read apart.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'kernel-knows-no-domain',
      severity: 'error',
      comment:
        'The kernel (http, db, lib, jobs, config, kernel.ts) serves every domain and names none; only db/schema.ts lists the tables of all.',
      from: { path: KERNEL, pathNot: '^src/db/schema[.]ts$' },
      to: { path: `^src/(${DOMAINS}|cli)/|^src/(app|services|main)[.]ts$` },
    },
    {
      name: 'schema-knows-only-tables',
      severity: 'error',
      comment: "db/schema.ts names each domain's table types, and nothing else of a domain.",
      from: { path: '^src/db/schema[.]ts$' },
      to: { path: `^src/(${DOMAINS})/`, pathNot: `^src/(${DOMAINS})/tables[.]ts$` },
    },
    {
      name: 'nothing-imports-the-composition-root',
      severity: 'error',
      comment: 'src/app.ts wires config, database, services, server and jobs; only the entry point starts it.',
      from: { path: '^src/', pathNot: '^src/main[.]ts$' },
      to: { path: '^src/app[.]ts$' },
    },
    {
      name: 'domains-meet-through-their-public-files',
      severity: 'error',
      comment: 'A domain reaches another only through its service, its types or a file it declares public (PUBLIC above).',
      from: { path: `^src/(${DOMAINS})/` },
      to: { path: `^src/(${DOMAINS})/`, pathNot: ['^src/$1/', ...PUBLIC] },
    },
    {
      name: 'sql-only-in-stores',
      severity: 'error',
      comment:
        "kysely (its builders, its sql tag) only in stores, migrations and the db kernel, and its row types in tables.ts; Biome's sql-outside-stores plugin checks the calls on an Executor anywhere else.",
      from: { path: '^(src|migrations)/', pathNot: ['/store/', 'store[.]ts$', '/tables[.]ts$', '^src/db/', '^migrations/'] },
      to: { path: '^node_modules/kysely/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    parser: 'swc',
    exclude: { path: '[.]d[.]ts$' },
    reporterOptions: {
      archi: {
        collapsePattern: '^src/[^/]+|^migrations',
      },
    },
  },
};
