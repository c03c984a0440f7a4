import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import type { RunningGantry } from '../helpers/spawn.js';

const URLS = [
  '/api/v1/status',
  '/api/v1/status/services',
  '/api/v1/status/services/core',
  '/api/v1/status/uptime/24h',
  '/status',
  '/status/feed.atom',
];

interface Answer {
  status: number;
  etag: string | null;
  lastModified: string | null;
  date: string | null;
  body: Buffer;
}

async function get(node: RunningGantry, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${node.url}${path}`, { headers });
  return {
    status: res.status,
    etag: res.headers.get('etag'),
    lastModified: res.headers.get('last-modified'),
    date: res.headers.get('date'),
    body: Buffer.from(await res.arrayBuffer()),
  };
}

const minuteOf = (date: string | null) => Math.floor(Date.parse(date ?? '') / 60_000);

/**
 * One answer from each node, asked for in the same minute of the wall clock (a version is as of
 * the minute at the latest: across a minute's turn the two may rightly differ, so ask again).
 */
async function fromBoth(a: RunningGantry, b: RunningGantry, path: string): Promise<[Answer, Answer]> {
  for (;;) {
    const fromA = await get(a, path);
    const fromB = await get(b, path);
    if (minuteOf(fromA.date) === minuteOf(fromB.date)) return [fromA, fromB];
  }
}

function assertSame(fromA: Answer, fromB: Answer, path: string) {
  assert.equal(fromA.status, 200, path);
  assert.equal(fromB.status, 200, path);
  assert.ok(fromA.body.equals(fromB.body), `${path}: the same bytes on both nodes`);
  assert.equal(fromB.etag, fromA.etag, path);
  assert.equal(fromB.lastModified, fromA.lastModified, path);
}

/** The status service on two Gantry processes over one PostgreSQL database (docs/status.md). */
describe('status answers on two nodes', () => {
  let cluster: TestCluster;
  let a: RunningGantry;
  let b: RunningGantry;
  before(async () => {
    cluster = await startCluster(2);
    [a, b] = cluster.nodes;
    for (const args of [
      ['service', 'create', '--slug', 'core', '--name', 'Core'],
      ['component', 'create', '--service', 'core', '--slug', 'core-db', '--name', 'Database'],
    ]) {
      const run = await cluster.cli([...args, '--json']);
      assert.equal(run.code, 0, run.stderr);
    }
  });
  after(() => cluster.stop());

  it('the same data gives the same bytes, ETag and Last-Modified on both nodes', async () => {
    for (const path of URLS) {
      const [fromA, fromB] = await fromBoth(a, b, path);
      assertSame(fromA, fromB, path);
    }
  });

  it('a change made by the CLI reaches both nodes within a second with the same new validators', async () => {
    const [old] = await fromBoth(a, b, '/api/v1/status');
    const run = await cluster.cli(['component', 'set-status', 'core-db', 'major_outage', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const started = Date.now();
    let answers: [Answer, Answer];
    for (;;) {
      answers = await fromBoth(a, b, '/api/v1/status');
      if (answers[0].etag !== old.etag && answers[1].etag !== old.etag) break;
      if (Date.now() - started > 1_000) assert.fail('the change did not reach both nodes within a second');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const [fromA, fromB] = answers;
    assertSame(fromA, fromB, '/api/v1/status');
    assert.equal(JSON.parse(fromB.body.toString()).data.status, 'major_outage');
    // A's validators are B's: its ETag gets a 304 there, and the old one a 200 on either.
    const byTag = await get(b, '/api/v1/status', { 'if-none-match': fromA.etag as string });
    assert.equal(byTag.status, 304);
    assert.equal(byTag.etag, fromA.etag);
    for (const node of [a, b])
      assert.equal((await get(node, '/api/v1/status', { 'if-none-match': old.etag as string })).status, 200);
    // A date after the as-of second confirms the copy on either node (asked again if the minute
    // turned meanwhile: the version is then as of the new minute).
    for (;;) {
      const [current] = await fromBoth(a, b, '/api/v1/status');
      const later = new Date(Date.parse(current.lastModified as string) + 1_000).toUTCString();
      const answers = [await get(a, '/api/v1/status', { 'if-modified-since': later })];
      answers.push(await get(b, '/api/v1/status', { 'if-modified-since': later }));
      if (answers.some((r) => minuteOf(r.date) !== minuteOf(current.date))) continue;
      assert.deepEqual(
        answers.map((r) => r.status),
        [304, 304],
      );
      break;
    }
  });
});
