import { runCli } from './cli/program.js';

const stopSignal = new Promise<string>((resolve) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve(signal));
});

void runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
  env: process.env,
  stopSignal,
}).then((code) => {
  process.exitCode = code;
  // Nothing may keep a finished command alive (idle sockets, timers of a failed start).
  setImmediate(() => process.exit(code));
});
