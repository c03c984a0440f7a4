// Finds the Chromium the browser tests drive, once per run (test/run.mjs calls it before any
// test starts, so two test files never unpack it at the same time). A Chromium installed on the
// machine is preferred; otherwise the build that the @sparticuz/chromium devDependency ships is
// unpacked to the temp directory, so `npm ci && npm test` needs nothing else.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';

const SYSTEM_CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** True when the binary runs: an unpacking cut short leaves a file that does not. */
function runs(path) {
  try {
    execFileSync(path, ['--version'], { stdio: 'pipe', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

/** The path of a working Chromium; throws saying what is missing. */
export async function chromiumPath() {
  if (process.env.GANTRY_TEST_CHROMIUM) return process.env.GANTRY_TEST_CHROMIUM;
  const system = SYSTEM_CHROMIUM.find((path) => existsSync(path));
  if (system) return system;
  let packaged;
  try {
    packaged = (await import('@sparticuz/chromium')).default;
  } catch (err) {
    throw new Error(
      `no Chromium: none installed at ${SYSTEM_CHROMIUM.join(', ')} and the @sparticuz/chromium devDependency cannot be loaded (run npm ci): ${err}`,
    );
  }
  let path = await packaged.executablePath();
  if (!runs(path)) {
    // A stale or half-written copy from an interrupted run: unpack it again, once.
    rmSync(path, { force: true });
    path = await packaged.executablePath();
    if (!runs(path)) throw new Error(`the Chromium unpacked by @sparticuz/chromium at ${path} does not run`);
  }
  return path;
}
