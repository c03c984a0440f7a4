import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  assertPublicUrl,
  bodyChunks,
  type GuardedResponse,
  guardedFetch,
  guardedRequest,
  isInternalAddress,
  readLimited,
} from '../../src/lib/outbound.js';

describe('outbound safety', () => {
  it('classifies internal addresses', () => {
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '172.31.255.255',
      '192.168.0.10',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:10.0.0.1',
    ])
      assert.equal(isInternalAddress(a), true, a);
    for (const a of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '172.32.0.1'])
      assert.equal(isInternalAddress(a), false, a);
  });

  it('unwraps IPv4 addresses embedded in IPv6 forms, and refuses the NAT64 local-use and Teredo prefixes', () => {
    const internal = [
      '::127.0.0.1',
      '::7f00:1',
      '::10.0.0.1', // IPv4-compatible (::/96)
      '::ffff:7f00:1',
      '::ffff:0:127.0.0.1',
      '::ffff:0:a9fe:a9fe', // mapped, translated
      '64:ff9b::7f00:1',
      '64:ff9b::169.254.169.254',
      '64:ff9b::c0a8:101', // NAT64 well-known prefix
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::',
      '2002:0a00:0001:1234::5', // 6to4
      '64:ff9b:1::7f00:1',
      '64:ff9b:1:ffff::1:1:1:1', // NAT64 local-use /48: refused whole
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
      '2001::1', // Teredo /32: refused whole
      'fe80::1%eth0',
    ];
    for (const a of internal) assert.equal(isInternalAddress(a), true, a);
    // The same forms around a public IPv4 address stay reachable.
    for (const a of [
      '::ffff:1.1.1.1',
      '64:ff9b::101:101',
      '64:ff9b::93.184.216.34',
      '2002:101:101::1',
      '2001:db8:1::1',
      '2001:4860:4860::8888',
    ])
      assert.equal(isInternalAddress(a), false, a);
  });

  it('refuses URLs with IPv4-embedding IPv6 hosts at save time and at connect time', async () => {
    for (const url of [
      'http://[::127.0.0.1]:18471/mcp',
      'http://[64:ff9b::7f00:1]:18471/mcp',
      'http://[2002:7f00:1::1]:18471/mcp',
      'http://[64:ff9b:1::a00:1]/',
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    ]) {
      await assert.rejects(assertPublicUrl(url, false), /loopback, private, link-local or metadata/, url);
    }
    const { guardedLookup } = await import('../../src/lib/outbound.js');
    for (const host of ['::127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::1']) {
      const err = await new Promise<(Error & { code?: string }) | null>((resolve) =>
        guardedLookup(false)(host, { all: true } as never, ((e: Error | null) => resolve(e as never)) as never),
      );
      assert.equal(err?.code, 'EBLOCKED', host);
    }
  });

  it('refuses internal and non-http URLs unless private networks are allowed', async () => {
    await assert.rejects(assertPublicUrl('http://169.254.169.254/latest', false), /link-local|metadata/);
    await assert.rejects(assertPublicUrl('http://user:pw@1.1.1.1/', false), /credentials/);
    await assert.rejects(assertPublicUrl('gopher://1.1.1.1/', false), /http/);
    assert.equal((await assertPublicUrl('http://127.0.0.1:1/', true)).port, '1');
    assert.equal((await assertPublicUrl('https://1.1.1.1/x', false)).hostname, '1.1.1.1');
  });

  it('bounds responses in size and time and never follows redirects', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/big') return res.end(Buffer.alloc(2048, 97));
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2000).unref();
      if (req.url === '/redirect') return res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await assert.rejects(guardedFetch({ allowPrivate: false })(`${base}/`), /loopback/);
      // The size checks get a deadline a loaded machine cannot miss; the slow answer (2 s) one it must.
      const f = guardedFetch({ allowPrivate: true, timeoutMs: 10_000, maxBytes: 1024 });
      await assert.rejects(async () => readLimited(await f(`${base}/big`), 1024), /larger than/);
      await assert.rejects(async () => (await f(`${base}/big`)).text(), /larger than/);
      const hurried = guardedFetch({ allowPrivate: true, timeoutMs: 200, maxBytes: 1024 });
      await assert.rejects(hurried(`${base}/slow`), /abort|timeout/i);
      assert.equal((await f(`${base}/redirect`)).status, 302);
      assert.equal(await readLimited(await f(`${base}/`)), 'ok');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('guardedRequest (node streams, for the MCP upstream calls)', () => {
  it('has the same guard, size limit and deadline as guardedFetch, the deadline covering the body', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/big') return res.end(Buffer.alloc(2048, 97));
      if (req.url === '/stall') {
        res.writeHead(200);
        res.write('part');
        return;
      }
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => res.end(`${req.method} ${req.headers['x-h']} ${req.headers['content-length']} ${body}`));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const read = async (res: GuardedResponse) => {
      let text = '';
      for await (const chunk of bodyChunks(res)) text += chunk.toString('utf8');
      return text;
    };
    const post = { method: 'POST', headers: { 'x-h': 'v' }, body: 'héllo' };
    try {
      await assert.rejects(guardedRequest(`${base}/`, post, { allowPrivate: false }), /loopback/);
      await assert.rejects(
        guardedRequest('http://169.254.169.254/', post, { allowPrivate: false }),
        /link-local|metadata/,
      );
      const ok = await guardedRequest(`${base}/`, post, { allowPrivate: true, timeoutMs: 10_000 });
      assert.equal(ok.statusCode, 200);
      assert.equal(await read(ok), 'POST v 6 héllo');
      const big = await guardedRequest(
        `${base}/big`,
        { method: 'GET', headers: {} },
        { allowPrivate: true, maxBytes: 1024 },
      );
      await assert.rejects(read(big), /larger than 1024 bytes/);
      const stalled = await guardedRequest(
        `${base}/stall`,
        { method: 'GET', headers: {} },
        { allowPrivate: true, timeoutMs: 300 },
      );
      await assert.rejects(read(stalled), /no answer within 300 ms/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('connect-time address check', () => {
  it('checks the addresses the socket will use, not only the URL', async () => {
    const { guardedLookup } = await import('../../src/lib/outbound.js');
    const run = (allow: boolean, all: boolean) =>
      new Promise<{ err: (Error & { code?: string }) | null; value: unknown }>((resolve) =>
        guardedLookup(allow)(
          'localhost',
          { all } as never,
          ((err: Error | null, value: unknown) => resolve({ err: err as never, value })) as never,
        ),
      );
    const blocked = await run(false, true);
    assert.equal(blocked.err?.code, 'EBLOCKED');
    const allowed = await run(true, true);
    assert.equal(allowed.err, null);
    assert.ok(
      Array.isArray(allowed.value) &&
        (allowed.value as Array<{ address: string }>).some((a) => a.address === '127.0.0.1' || a.address === '::1'),
    );
    const single = await run(true, false);
    assert.equal(typeof single.value, 'string');
  });
});
