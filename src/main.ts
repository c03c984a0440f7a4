import { createAppContext, startApp } from './app.js';
import { runCli } from './cli/program.js';

// Installed only when a command waits for it (serve): every other command keeps Node's
// default, so Ctrl-C ends it at once.
let stopSignal: Promise<string> | null = null;
const waitForStop = () =>
  (stopSignal ??= new Promise<string>((resolve) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve(signal));
  }));

void runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  // Prompts draw on stderr: stdout keeps only the result (one JSON document with --json), and a
  // result sent to a file or a pipe still lets the operator answer on the terminal.
  interactive: Boolean(process.stdin.isTTY && process.stderr.isTTY),
  terminal: { input: process.stdin, output: process.stderr },
  env: process.env,
  get stopSignal() {
    return waitForStop();
  },
  app: { open: createAppContext, start: startApp },
}).then((code) => {
  process.exitCode = code;
  // Nothing may keep a finished command alive (idle sockets, timers of a failed start).
  setImmediate(() => process.exit(code));
});
