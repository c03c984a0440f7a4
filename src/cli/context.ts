import { resolveConfig, type ConfigFlags } from '../config.js';
import { createAppContext, type AppContext } from '../app.js';
import { createLogger } from '../lib/logger.js';
import type { CliIo, CommonOptions } from './io.js';

/**
 * Opens the data dir for one command: config, kernel (migrations applied on SQLite, checked on
 * PostgreSQL), services.
 * Commands log only warnings (to stderr) so --json output stays one document.
 */
export async function withApp<T>(
  io: CliIo,
  options: CommonOptions & ConfigFlags,
  fn: (app: AppContext) => Promise<T>,
  /** Apply pending migrations on PostgreSQL as well (`gantry migrate`); SQLite always does. */
  migrate = false,
): Promise<T> {
  const config = resolveConfig({ dataDir: options.dataDir }, io.env);
  const logger = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn', (line) => io.err(line.trimEnd()));
  const app = await createAppContext(config, { logger, env: io.env, migrate });
  try {
    return await fn(app);
  } finally {
    await app.kernel.close();
  }
}
