import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { missingDataDir, resolveConfig, type ConfigFlags } from '../config.js';
import type { AppContext } from '../app-types.js';
import { createLogger } from '../lib/logger.js';
import type { CliIo, CommonOptions } from './io.js';

/** The commands that start an installation, and so may create its data directory. */
const CREATE_DATA_DIR = new Set(['serve', 'migrate']);

/**
 * Runs before every command's action, so a mistyped --data-dir is refused before any prompt:
 * only `serve` and `migrate` create a data directory; every other command refuses a missing
 * one in one line naming the path (exit 1), since on SQLite the directory is the installation
 * and a typo would start a second, empty one. On PostgreSQL the database is the installation
 * and the directory only holds a `secrets.json` from before the move (docs/postgres.md,
 * Secrets): a missing one is refused when the operator named it (--data-dir or
 * GANTRY_DATA_DIR: they meant that file), and the unnamed default is neither needed nor created.
 */
export function refuseMissingDataDir(io: CliIo, command: Command): void {
  if (command.parent?.parent === null && CREATE_DATA_DIR.has(command.name())) return;
  const { dataDir } = command.opts<CommonOptions>();
  const config = resolveConfig({ dataDir }, io.env);
  if (existsSync(config.dataDir)) return;
  const named = dataDir !== undefined || Boolean(io.env.GANTRY_DATA_DIR);
  if (config.databaseUrl === null || named) throw missingDataDir(config.dataDir);
}

/**
 * Opens the data dir for one command: config, kernel (migrations applied on SQLite, checked on
 * PostgreSQL), services.
 * Commands log only warnings (to stderr) so --json output stays one document.
 */
export async function withApp<T>(
  io: CliIo,
  options: CommonOptions & ConfigFlags,
  fn: (app: AppContext) => Promise<T>,
  /** `gantry migrate`: apply pending migrations on PostgreSQL as well (SQLite always does), and create the data dir. */
  migrate = false,
): Promise<T> {
  const config = resolveConfig({ dataDir: options.dataDir }, io.env);
  const logger = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn', (line) => io.err(line.trimEnd()));
  const app = await io.app.open(config, { logger, env: io.env, migrate, createDataDir: migrate });
  try {
    return await fn(app);
  } finally {
    await app.kernel.close();
  }
}
