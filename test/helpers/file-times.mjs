// Imported first into each test file's process by test/run.mjs (node --test hands its --import to
// the processes it starts): at exit, appends one line to the file GANTRY_TEST_TIMES names, with
// the test file, its wall time from the process's start (its imports included, which the
// runner's own durations leave out) and its CPU time, its own and that of the processes it
// started and waited for (the binaries of the end-to-end tests). The runner prints the slowest.
import { appendFileSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const out = process.env.GANTRY_TEST_TIMES;
const file = process.argv[1];
// CPU of waited-for children, in clock ticks (USER_HZ, 100 on Linux): fields 16 and 17 of
// /proc/self/stat, counted after the command name, which may hold spaces.
const childrenMs = () => {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
};

if (out && file?.endsWith('.test.js') && !process.execArgv.includes('--test')) {
  process.once('exit', () => {
    const { user, system } = process.cpuUsage();
    const record = {
      file,
      ms: Math.round(performance.now()),
      cpuMs: Math.round((user + system) / 1000) + childrenMs(),
    };
    appendFileSync(out, `${JSON.stringify(record)}\n`);
  });
}
