import { AssertionError } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Server, ServerInjectOptions } from '@hapi/hapi';
import { resolveConfig, type ConfigFlags } from '../../src/config.js';
import { createAppContext, type AppContext } from '../../src/app.js';
import { createServer } from '../../src/http/server.js';
import { ManualClock, systemClock, type Clock } from '../../src/lib/clock.js';
import { createLogger, type Logger } from '../../src/lib/logger.js';
import { answerChecker, listenerChecker } from './openapi-check.js';

/** Environment every test app gets: cheap scrypt, no log noise. */
export const TEST_ENV: NodeJS.ProcessEnv = {
  GANTRY_SCRYPT_COST: '1024',
  GANTRY_LOG_LEVEL: 'silent',
  GANTRY_PUBLIC_URL: 'http://127.0.0.1:8080',
};

export interface TestApp {
  app: AppContext;
  server: Server;
  clock: Clock;
  dataDir: string;
  /** Captured log lines (JSON), to assert that nothing secret is logged. */
  logs: string[];
  inject(options: ServerInjectOptions | string): ReturnType<Server['inject']>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  clock?: ManualClock;
  env?: NodeJS.ProcessEnv;
  flags?: ConfigFlags;
  statusOnly?: boolean;
  dataDir?: string;
}

/**
 * A real app over a real temporary SQLite file (migrated), its hapi server initialized but
 * not listening: tests use server.inject(). One per test file; close() removes the files.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'gantry-test-'));
  const env = { ...TEST_ENV, ...options.env };
  const config = resolveConfig({ dataDir, ...options.flags }, env);
  const logs: string[] = [];
  const logger: Logger = createLogger('debug', (line) => logs.push(line));
  const clock = options.clock ?? systemClock;
  const app = await createAppContext(config, { clock, logger, env });
  const server = await createServer(app, { statusOnly: options.statusOnly });
  await server.initialize();
  // Every answer of every test is checked against the OpenAPI document (docs/openapi.md):
  // inject()'s at once, those of the real listener when the app closes.
  const check = answerChecker(server);
  const listened = listenerChecker(server);
  return {
    app,
    server,
    clock,
    dataDir,
    logs,
    async inject(opts) {
      const res = await server.inject(opts);
      check(res);
      return res;
    },
    async close() {
      await server.stop();
      await app.kernel.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
      const failures = listened.failures();
      if (failures.length > 0)
        throw new AssertionError({
          message: `Answers over the listener that the OpenAPI document does not allow:\n${failures.join('\n')}`,
        });
    },
  };
}
