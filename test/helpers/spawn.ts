import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_ENV } from './app.js';
import { createTestDatabase, sharedKeys, TEST_ENGINE } from './postgres.js';

const BIN = fileURLToPath(new URL('../../bin/gantry', import.meta.url));

export interface RunningGantry {
  url: string;
  dataDir: string;
  proc: ChildProcess;
  stdout: string[];
  /** Everything written on stderr so far. */
  stderr(): string;
  /** Runs a CLI command of the same binary against the same data dir. */
  cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** SIGTERM, then waits for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export function runBin(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 20_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gantry ${args.join(' ')} timed out`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Spawns the built bin/gantry (npm test builds it first) on a free loopback port and waits
 * for its "gantry listening on" line.
 */
export async function spawnGantry(
  options: {
    env?: NodeJS.ProcessEnv;
    args?: string[];
    dataDir?: string;
    /** Run bin/gantry itself, as systemd and a terminal do, instead of `node bin/gantry`. */
    asExecutable?: boolean;
  } = {},
): Promise<RunningGantry> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'gantry-e2e-'));
  // GANTRY_TEST_ENGINE=postgres: the data directory's own database, unless the caller names one
  // (a cluster's nodes share theirs).
  const database =
    TEST_ENGINE === 'postgres' && !options.env?.GANTRY_DATABASE_URL ? await createTestDatabase(dataDir) : null;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...TEST_ENV,
    ...(database && { GANTRY_DATABASE_URL: database.url, ...sharedKeys(dataDir) }),
    GANTRY_PUBLIC_URL: '',
    GANTRY_LOG_LEVEL: 'warn',
    GANTRY_DATA_DIR: dataDir,
    GANTRY_PORT: '0',
    ...options.env,
  };
  const args = ['serve', ...(options.args ?? [])];
  const proc = spawn(options.asExecutable ? BIN : process.execPath, options.asExecutable ? args : [BIN, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    // A server that never said it listens is killed: left running, its pipes would keep the
    // test file's process alive after the failure, and the whole run would hang.
    // 30 s: a start takes about 1 s alone, and up to 15 s on a machine loaded with other test files.
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
      reject(new Error(`gantry did not start within 30 s: ${stderr}`));
    }, 30_000);
    let buffer = '';
    proc.stdout!.on('data', (chunk) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        stdout.push(line);
        const match = /^gantry listening on (\S+)/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      }
    });
    proc.on('exit', (code) => reject(new Error(`gantry exited with ${code}: ${stderr}`)));
  });
  let exited: Promise<number | null> | null = null;
  return {
    url,
    dataDir,
    proc,
    stdout,
    stderr: () => stderr,
    cli: (args) => runBin([...args, '--data-dir', dataDir], env),
    stop() {
      exited ??= new Promise((resolve) => {
        const done = (code: number | null) => {
          if (options.dataDir) return resolve(code);
          rmSync(dataDir, { recursive: true, force: true });
          if (!database) return resolve(code);
          database.drop().then(
            () => resolve(code),
            () => resolve(code),
          );
        };
        if (proc.exitCode !== null || proc.signalCode !== null) return done(proc.exitCode);
        proc.once('exit', done);
        proc.kill('SIGTERM');
      });
      return exited;
    },
  };
}
