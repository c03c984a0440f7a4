import { runCli } from '../../src/cli/program.js';
import { TEST_ENV } from './app.js';
import { testDatabaseEnv } from './postgres.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = unknown>(): T;
}

/** Runs a gantry command in-process against a data dir, capturing its output. */
export async function cli(
  args: string[],
  options: { dataDir: string; env?: NodeJS.ProcessEnv; interactive?: boolean },
): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli([...args, '--data-dir', options.dataDir], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    interactive: options.interactive ?? false,
    env: { ...TEST_ENV, ...(await testDatabaseEnv(options.dataDir)), ...options.env },
    stopSignal: new Promise(() => {}),
  });
  const stdout = out.join('\n');
  return { code, stdout, stderr: err.join('\n'), json: <T>() => JSON.parse(stdout) as T };
}
