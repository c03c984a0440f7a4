import { mkdirSync } from 'node:fs';
import { PassThrough, Writable } from 'node:stream';
import { runCli } from '../../src/cli/program.js';
import { createAppContext, startApp } from '../../src/app.js';
import { TEST_ENV } from './app.js';
import { testDatabaseEnv } from './postgres.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = unknown>(): T;
  /** What the scripted terminal showed (prompts, answers, reasons), without colours. */
  screen: string;
}

/** One exchange with a prompt: when `expect` shows up on the screen, `keys` are typed, then Enter. */
export interface TerminalStep {
  expect: RegExp;
  keys: string;
}

// The terminal's escape sequences, which are what is removed.
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/**
 * A terminal that answers prompts from a script, each answer typed once its question (or the
 * reason a previous answer was refused) is on the screen, over whatever the refused answer
 * left on the line (Ctrl-U first). A step that never shows up is answered with Ctrl-C after
 * 10 s, so the command fails (interrupted) instead of hanging the test.
 */
function scriptedTerminal(steps: TerminalStep[]) {
  const input = new PassThrough();
  let screen = '';
  let from = 0;
  let next = 0;
  const stall = setTimeout(() => input.write('\u0003'), 10_000);
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      screen += chunk.toString().replace(ANSI, '');
      const step = steps[next];
      if (step?.expect.test(screen.slice(from))) {
        next += 1;
        from = screen.length;
        setImmediate(() => input.write(`\u0015${step.keys}\r`));
        if (next === steps.length) clearTimeout(stall);
      }
      done();
    },
  });
  // Each prompt pipes into the terminal and ends its pipe when done: like process.stderr, the
  // terminal outlives them all.
  output.end = () => output;
  // A wide terminal: prompts wrap long questions at its width, which would split what steps match.
  Object.assign(output, { columns: 1000, rows: 50 });
  return {
    terminal: { input, output },
    screen: () => screen,
    finish: () => clearTimeout(stall),
  };
}

/**
 * Runs a gantry command in-process against a data dir, capturing its output. For a command
 * other than `serve` and `migrate` (which make their own) the data dir is created first, as
 * either would have: the others refuse a missing one; `missingDataDir: true` leaves it missing,
 * to test that refusal. With `terminal` the command runs as on a terminal, its prompts answered
 * by the script.
 */
export async function cli(
  args: string[],
  options: {
    dataDir: string;
    env?: NodeJS.ProcessEnv;
    interactive?: boolean;
    terminal?: TerminalStep[];
    missingDataDir?: boolean;
  },
): Promise<CliResult> {
  const createsItself = args[0] === 'serve' || args[0] === 'migrate';
  if (!options.missingDataDir && !createsItself) mkdirSync(options.dataDir, { recursive: true });
  const out: string[] = [];
  const err: string[] = [];
  const script = options.terminal ? scriptedTerminal(options.terminal) : null;
  const code = await runCli([...args, '--data-dir', options.dataDir], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    interactive: options.interactive ?? script !== null,
    ...(script && { terminal: script.terminal }),
    env: { ...TEST_ENV, ...(await testDatabaseEnv(options.dataDir)), ...options.env },
    stopSignal: new Promise(() => {}),
    app: { open: createAppContext, start: startApp },
  }).finally(() => script?.finish());
  const stdout = out.join('\n');
  return {
    code,
    stdout,
    stderr: err.join('\n'),
    json: <T>() => JSON.parse(stdout) as T,
    screen: script?.screen() ?? '',
  };
}
