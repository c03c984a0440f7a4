import type SqliteDatabase from 'better-sqlite3';
import { ensureDataDir, type Config } from './config.js';
import { parseBool } from './config-values.js';
import { openConfiguredDatabase, type Database, type DbHandle } from './db/connection.js';
import type { Engine } from './db/engine.js';
import { ChangeFeed } from './db/change-feed.js';
import { databaseSize, openPostgres } from './db/postgres.js';
import { checkSchema, migrate, type MigrationResult } from './db/migrator.js';
import { migrations } from '../migrations/index.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createLogger, type Logger } from './lib/logger.js';
import { createMissingKeyReport, type MissingKeyReport } from './lib/missing-key.js';
import { JwtCodec } from './lib/jwt.js';
import { Mailer } from './lib/mailer.js';
import { Metrics } from './lib/metrics.js';
import { loadSecrets, type Secrets } from './lib/secrets.js';
import { loadDatabaseKeyring } from './lib/keyring.js';
import { CursorCodec } from './http/pagination.js';
import { RateLimiter } from './http/rate-limiter.js';
import { createPageKit } from './http/pages.js';
import type { PageKit } from './http/page-kit.js';
import { createPageForms, type PageForms } from './http/page-forms.js';
import { hmacSha256 } from './lib/crypto.js';
import { createTracing, type Tracing } from './lib/tracing.js';

/** What every domain may use and none of them owns. Passed explicitly; no module state. */
export interface Kernel {
  config: Config;
  secrets: Secrets;
  clock: Clock;
  logger: Logger;
  db: Database;
  /** SQLite or PostgreSQL (docs/postgres.md). */
  engine: Engine;
  /** The raw SQLite connection (backup, the refresh hot path); null on PostgreSQL. */
  sqlite: SqliteDatabase.Database | null;
  changes: ChangeFeed;
  mailer: Mailer;
  jwt: JwtCodec;
  cursors: CursorCodec;
  limiter: RateLimiter;
  /** Prometheus registry of this process; domains add their own counters to it. */
  metrics: Metrics;
  /** Spans exported over OTLP when OTEL_EXPORTER_OTLP_*ENDPOINT is set; no-ops otherwise (docs/kernel.md, Traces). */
  tracing: Tracing;
  /** The pages' layout, stylesheet and brand (docs/kernel.md, Pages). */
  pages: PageKit;
  /** The pages' cookies and CSRF values (docs/kernel.md, Pages). */
  pageForms: PageForms;
  /** Logs a credential key this node lacks once per process (docs/postgres.md, Secrets). */
  reportMissingKey: MissingKeyReport;
  migration: MigrationResult;
  /** Something a domain holds that must end with the kernel (a worker thread); run first by close(). */
  onClose(hook: () => Promise<void>): void;
  close(): Promise<void>;
}

export interface KernelOverrides {
  clock?: Clock;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
  /**
   * Apply pending migrations on PostgreSQL too (`gantry migrate`). SQLite always migrates at
   * start; PostgreSQL nodes only check the schema (docs/scaling.md, Deploying).
   */
  migrate?: boolean;
  /**
   * Create a missing data directory (the default: serve, migrate, tests); the other CLI
   * commands pass false (src/config.ts, ensureDataDir).
   */
  createDataDir?: boolean;
}

/** Data dir, secrets, database (migrated), and the shared machinery over them. */
export async function createKernel(config: Config, overrides: KernelOverrides = {}): Promise<Kernel> {
  ensureDataDir(config, overrides.createDataDir ?? true);
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const env = overrides.env ?? process.env;
  const secrets = loadSecrets(config.dataDir, env, config.databaseUrl !== null);
  // Before the database: its spans start with the first request, and it holds nothing to close
  // but an idle export timer should opening the database fail.
  const tracing = await createTracing(config.tracing, logger);
  // Development and tests only (docs/kernel.md, Transactions): a query around an open transaction throws.
  const handle = openConfiguredDatabase(config, {
    guardTransactions: parseBool('GANTRY_GUARD_TRANSACTIONS', env.GANTRY_GUARD_TRANSACTIONS ?? false),
  });
  let counters: DbHandle | null = null;
  try {
    const migration = await prepareSchema(handle.db, handle.engine, overrides.migrate === true, env, logger, clock);
    await loadDatabaseKeyring(handle.db, secrets);
    const changes = new ChangeFeed(handle.db, handle.sqlite, clock, logger, config.databaseUrl);
    const mailer = new Mailer(handle.db, config.smtpUrl, clock, logger, {
      name: config.brand.name,
      address: 'no-reply@gantry.local',
    });
    // The counters shared across nodes get a small pool of their own: a limit is charged inside
    // transactions too (the token endpoint's), and a transaction holding one connection of the
    // main pool must never wait for another one (docs/postgres.md, Rate limits). Past 2 s of
    // waiting, the limiter counts in memory.
    const closeHooks: Array<() => Promise<void>> = [];
    counters = config.databaseUrl
      ? openPostgres(config.databaseUrl, { maxConnections: 2, connectWaitMs: 2_000 })
      : null;
    return {
      config,
      secrets,
      clock,
      logger,
      db: handle.db,
      engine: handle.engine,
      sqlite: handle.sqlite,
      changes,
      mailer,
      jwt: new JwtCodec(secrets.jwtSigningKey, config.publicUrl, clock),
      cursors: new CursorCodec(secrets.cursorSigningKey),
      limiter: new RateLimiter(config.rateLimitMultiplier, clock, counters ? { db: counters.db, logger } : null),
      metrics: new Metrics(handle.engine === 'postgres' ? () => databaseSize(handle.db) : config.dbFile, {
        processMetrics: config.metrics !== null,
      }),
      tracing,
      pages: createPageKit(config.brand),
      // The key the OAuth pages' CSRF values had: a form shown by a node of the previous
      // version is still accepted by one of this version (docs/scaling.md, rolling upgrades).
      pageForms: createPageForms(config.publicUrl, hmacSha256(secrets.jwtSigningKey, 'gantry oauth pages v1')),
      reportMissingKey: createMissingKeyReport(logger),
      migration,
      onClose(hook) {
        closeHooks.push(hook);
      },
      async close() {
        await Promise.all(closeHooks.map((hook) => hook()));
        await changes.stop();
        await mailer.close();
        await counters?.close();
        await handle.close();
        // Last: the spans of everything above are ended by now, and are exported before exit.
        await tracing.shutdown();
      },
    };
  } catch (err) {
    await counters?.close();
    await handle.close();
    await tracing.shutdown();
    throw err;
  }
}

async function prepareSchema(
  db: Database,
  engine: Engine,
  migrateNow: boolean,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  clock: Clock,
): Promise<MigrationResult> {
  if (engine === 'sqlite' || migrateNow) return migrate(db, migrations, () => clock.now());
  const allowNewer = env.GANTRY_ALLOW_NEWER_SCHEMA === '1' || env.GANTRY_ALLOW_NEWER_SCHEMA === 'true';
  const { newer, ...result } = await checkSchema(db, migrations, allowNewer);
  if (newer.length > 0)
    logger.warn('running on a database migrated by a newer gantry (GANTRY_ALLOW_NEWER_SCHEMA)', { newer });
  return result;
}
