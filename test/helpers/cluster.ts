import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase } from './postgres.js';
import { TEST_ENV } from './app.js';
import { runBin, spawnGantry, type RunningGantry } from './spawn.js';

/** Several Gantry processes (the built binary) on one PostgreSQL database, as behind a load balancer. */
export interface TestCluster {
  nodes: RunningGantry[];
  /** The database URL every node uses. */
  databaseUrl: string;
  /** The environment every node runs with (shared secrets, the database). */
  env: NodeJS.ProcessEnv;
  /** A CLI command of the same binary against the cluster's database, from a data directory of its own. */
  cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Starts one more node on the same database. */
  addNode(extraEnv?: NodeJS.ProcessEnv): Promise<RunningGantry>;
  /** Stops every node (SIGTERM) and drops the database. */
  stop(): Promise<void>;
}

/**
 * Starts `size` nodes on a fresh database copied from the migrated template (always PostgreSQL,
 * whatever GANTRY_TEST_ENGINE says: several nodes need it). The nodes share the keys an operator
 * ships to every node (docs/postgres.md); each has a data directory of its own.
 */
export async function startCluster(size: number, extraEnv: NodeJS.ProcessEnv = {}): Promise<TestCluster> {
  const home = mkdtempSync(path.join(tmpdir(), 'gantry-cluster-'));
  const database = await createTestDatabase(home);
  const key = () => randomBytes(32).toString('base64');
  const env: NodeJS.ProcessEnv = {
    GANTRY_DATABASE_URL: database.url,
    // One public URL for all, as behind a load balancer: it is the tokens' issuer.
    GANTRY_PUBLIC_URL: 'http://gantry-cluster.test',
    GANTRY_SECRET_JWT_KEY: key(),
    GANTRY_SECRET_CURSOR_KEY: key(),
    GANTRY_SECRET_CREDENTIAL_KEY: key(),
    ...extraEnv,
  };
  const nodes: RunningGantry[] = [];
  const addNode = async (nodeEnv: NodeJS.ProcessEnv = {}) => {
    const node = await spawnGantry({ env: { ...env, ...nodeEnv } });
    nodes.push(node);
    return node;
  };
  try {
    // One after the other: the first start is the one that would migrate.
    for (let i = 0; i < size; i++) await addNode();
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    await database.drop();
    rmSync(home, { recursive: true, force: true });
    throw err;
  }
  // Named with --data-dir, so it must exist (src/cli/context.ts): an operator's machine has its own.
  const cliDir = path.join(home, 'cli');
  mkdirSync(cliDir);
  return {
    nodes,
    databaseUrl: database.url,
    env,
    addNode,
    cli: (args) => runBin([...args, '--data-dir', cliDir], { ...TEST_ENV, GANTRY_LOG_LEVEL: 'warn', ...env }),
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
      await database.drop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
