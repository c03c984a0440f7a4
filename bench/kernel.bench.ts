// The kernel's figures (PERFORMANCE.md): POST /auth/login, an authenticated GET /auth/me and
// a bare Hapi route in the same run, plus start-up to listening and idle RSS.
//   node build.mjs && node --import tsx bench/kernel.bench.ts
import { best, measure, pinLoadGenerator, report, requireBuilt, rss, startBareHapi, startGantry } from './lib.js';

pinLoadGenerator(import.meta.url);
requireBuilt();

const EMAIL = 'bench@example.test';
const PASSWORD = 'bench password 1';

// Start-up: a first start on an empty data dir (secrets, migrations) and a restart.
const fresh = await startGantry();
const firstStartMs = fresh.startMs;
await fresh.stop();
const gantry = await startGantry({ dataDir: fresh.dataDir });
await new Promise((resolve) => setTimeout(resolve, 1000));
const idleRss = rss(gantry.proc.pid!);

gantry.cli(['user', 'create', '--email', EMAIL, '--password', PASSWORD, '--name', 'Bench User', '--verified']);
const loginBody = JSON.stringify({ email: EMAIL, password: PASSWORD });
const login = await fetch(`${gantry.url}/api/v1/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: loginBody,
});
if (login.status !== 200) throw new Error(`login failed: ${login.status} ${await login.text()}`);
const { data } = (await login.json()) as { data: { accessToken: string } };

const bare = await startBareHapi();
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const refRounds = [];
const meRounds = [];
for (let round = 0; round < ROUNDS; round++) {
  refRounds.push(await measure({ name: 'bare Hapi route (reference)', url: `${bare.url}/bare`, pid: bare.proc.pid }));
  meRounds.push(
    await measure({
      name: 'GET /api/v1/auth/me (session JWT)',
      url: `${gantry.url}/api/v1/auth/me`,
      pid: gantry.proc.pid,
      headers: { authorization: `Bearer ${data.accessToken}` },
    }),
  );
}
await bare.stop();
const reference = best(refRounds);
const me = best(meRounds);
const signIn = await measure({
  name: 'POST /api/v1/auth/login (scrypt N=16384)',
  url: `${gantry.url}/api/v1/auth/login`,
  pid: gantry.proc.pid,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: loginBody,
});
const loadedRss = rss(gantry.proc.pid!);
await gantry.stop();

report(`kernel (best of ${ROUNDS} interleaved rounds for the GETs)`, [reference, me, signIn], reference);
console.log(
  `start-up to listening: first start ${Math.round(firstStartMs)} ms (migrations), restart ${Math.round(gantry.startMs)} ms (goal < 1000 ms, includes node start)`,
);
console.log(`RSS: idle ${idleRss?.text ?? '?'} (goal < 100 MB), after load ${loadedRss?.text ?? '?'}`);
console.log(
  `authenticated GET vs bare route: ${Math.round((me.rps / reference.rps) * 100)}% by 2xx/s, ${me.cpuUsPerReq && reference.cpuUsPerReq ? Math.round((reference.cpuUsPerReq / me.cpuUsPerReq) * 100) : '?'}% by server CPU per request (goal >= 80%)`,
);
