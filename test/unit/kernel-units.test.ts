import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Joi from 'joi';
import { CursorCodec, offsetMeta, offsetQuery, cursorQuery } from '../../src/http/pagination.js';
import {
  DomainError,
  ErrorCodes,
  badRequest,
  conflict,
  forbidden,
  notFound,
  unauthorized,
} from '../../src/http/errors.js';
import { rateLimitHeaders } from '../../src/http/rate-limit.js';
import { RateLimiter } from '../../src/http/rate-limiter.js';
import { bearerToken } from '../../src/http/auth.js';
import { ManualClock } from '../../src/lib/clock.js';
import { resolveConfig, ConfigError } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { clientAddressFrom, trustedProxyTest } from '../../src/http/client-address.js';
import { hashPassword, randomDigits, safeEqual, verifyPassword } from '../../src/lib/crypto.js';

describe('CursorCodec', () => {
  const codec = new CursorCodec(Buffer.alloc(32, 7));
  it('round-trips a position within its scope', () => {
    const cursor = codec.encode('list:a', { createdAt: '2026-01-01', id: 'x' });
    assert.deepEqual(codec.decode('list:a', cursor), { createdAt: '2026-01-01', id: 'x' });
    assert.doesNotMatch(cursor, /createdAt/);
  });
  it('refuses forged, foreign-scope, foreign-key and garbled cursors with a 400 DomainError', () => {
    const cursor = codec.encode('list:a', { n: 1 });
    const [body, mac] = cursor.split('.');
    const cases = [
      `${Buffer.from('{"n":2}').toString('base64url')}.${mac}`,
      codec.encode('list:b', { n: 1 }),
      new CursorCodec(Buffer.alloc(32, 8)).encode('list:a', { n: 1 }),
      body,
      `${body}.${mac}.${mac}`,
      '',
      '....',
    ];
    for (const bad of cases) {
      assert.throws(
        () => codec.decode('list:a', bad),
        (err: unknown) => err instanceof DomainError && err.status === 400 && err.code === 'VALIDATION_FAILED',
        bad,
      );
    }
  });
  it('refuses a correctly signed body that is not a JSON object', () => {
    const notObject = codec.encode('s', 5 as unknown as Record<string, unknown>);
    assert.throws(() => codec.decode('s', notObject), DomainError);
  });
  it('page(): limit+1 rows mean a next page; its cursor continues after the last item', () => {
    const rows = [1, 2, 3, 4].map((n) => ({ n }));
    const page = codec.page('s', rows, 3, (r) => ({ n: r.n }));
    assert.deepEqual(page.items, rows.slice(0, 3));
    assert.equal(page.hasNextPage, true);
    assert.deepEqual(codec.decode('s', page.nextCursor!), { n: 3 });
    const last = codec.page('s', rows.slice(0, 2), 3, (r) => ({ n: r.n }));
    assert.equal(last.hasNextPage, false);
    assert.equal(last.nextCursor, null);
  });
});

describe('error catalog', () => {
  it('a DomainError takes its one status from the catalog; the helpers follow it', () => {
    for (const code of Object.keys(ErrorCodes) as Array<keyof typeof ErrorCodes>)
      assert.equal(new DomainError(code, 'm').status, ErrorCodes[code], code);
    assert.deepEqual(
      [badRequest('m'), unauthorized(), forbidden(), notFound(), conflict('m')].map((e) => [e.status, e.code]),
      [
        [400, 'VALIDATION_FAILED'],
        [401, 'UNAUTHORIZED'],
        [403, 'FORBIDDEN'],
        [404, 'NOT_FOUND'],
        [409, 'CONFLICT'],
      ],
    );
    assert.equal(unauthorized().headers['WWW-Authenticate'], 'Bearer');
  });
  it('only the listed exceptions go out with a second status', () => {
    const path = DomainError.withStatus(422, 'VALIDATION_FAILED', 'Invalid path', [{ field: 'id' }]);
    assert.deepEqual(
      [path.status, path.code, path.message, path.details],
      [422, 'VALIDATION_FAILED', 'Invalid path', [{ field: 'id' }]],
    );
    const open = DomainError.withStatus(503, 'UPSTREAM_FAILED', 'circuit open', undefined, { 'Retry-After': '5' });
    assert.deepEqual([open.status, open.code, open.headers], [503, 'UPSTREAM_FAILED', { 'Retry-After': '5' }]);
    assert.ok(open instanceof DomainError);
  });
});

describe('bearerToken', () => {
  it('reads the b64token of a Bearer header, case-insensitively; null for anything else', () => {
    assert.equal(bearerToken('Bearer abc.DEF-_~+/=='), 'abc.DEF-_~+/==');
    assert.equal(bearerToken('bearer   tok  '), 'tok');
    for (const bad of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwdw==',
      'Bearer a b',
      'Bearer tok"en',
      'Token abc',
    ])
      assert.equal(bearerToken(bad), null, String(bad));
  });
});

describe('offset helpers', () => {
  it('offsetMeta: hasNextPage while offset + limit < total', () => {
    assert.deepEqual(offsetMeta(45, 20, 0), { total: 45, limit: 20, offset: 0, hasNextPage: true });
    assert.equal(offsetMeta(45, 20, 40).hasNextPage, false);
    assert.equal(offsetMeta(40, 20, 20).hasNextPage, false);
    assert.equal(offsetMeta(0, 20, 0).hasNextPage, false);
  });
  it('offsetQuery: default 20, range 1..50, per-route max; values out of range fail (not clamped)', () => {
    const schema = Joi.object(offsetQuery());
    assert.deepEqual(schema.validate({}).value, { limit: 20, offset: 0 });
    assert.ok(schema.validate({ limit: 51 }).error);
    assert.ok(schema.validate({ limit: 0 }).error);
    assert.ok(schema.validate({ offset: -1 }).error);
    assert.equal(Joi.object(offsetQuery({ max: 500 })).validate({ limit: 500 }).error, undefined);
    assert.ok(Joi.object(offsetQuery({ max: 500 })).validate({ limit: 501 }).error);
  });
  it('cursorQuery: default 25', () => {
    assert.equal(Joi.object(cursorQuery()).validate({}).value.limit, 25);
  });
});

describe('RateLimiter', () => {
  it('fixed window: allows limit, refuses limit+1, resets when the window ends', () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const limiter = new RateLimiter(1, clock);
    const rule = { limit: 3, windowSec: 60 };
    for (let i = 0; i < 3; i++) assert.equal(limiter.hit('k', rule).allowed, true);
    const refused = limiter.hit('k', rule);
    assert.equal(refused.allowed, false);
    assert.equal(refused.remaining, 0);
    const headers = rateLimitHeaders(refused, clock.now().getTime());
    assert.equal(headers['Retry-After'], '60');
    assert.equal(limiter.peek('k', rule).allowed, false);
    clock.advance(60_000);
    assert.equal(limiter.hit('k', rule).allowed, true);
    assert.equal(limiter.hit('other', rule).remaining, 2);
  });
  it('multiplier scales limits and never drops below 1', () => {
    const clock = new ManualClock();
    assert.equal(new RateLimiter(10, clock).effectiveLimit({ limit: 8, windowSec: 60 }), 80);
    assert.equal(new RateLimiter(0.01, clock).effectiveLimit({ limit: 8, windowSec: 60 }), 1);
  });
});

describe('config', () => {
  const base = { GANTRY_DATA_DIR: '/tmp/gantry-config-test' };
  it('defaults, env, and flags over env', () => {
    const c = resolveConfig({}, base);
    assert.equal(c.port, 8080);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.publicUrl, 'http://127.0.0.1:8080');
    assert.equal(c.rateLimitMultiplier, 1);
    assert.equal(c.smtpUrl, null);
    assert.equal(resolveConfig({ port: '9000' }, { ...base, GANTRY_PORT: '7000' }).port, 9000);
    assert.equal(resolveConfig({}, { ...base, GANTRY_PORT: '7000' }).publicUrl, 'http://127.0.0.1:7000');
    assert.equal(
      resolveConfig({}, { ...base, GANTRY_PUBLIC_URL: 'https://id.example.com/' }).publicUrl,
      'https://id.example.com',
    );
    assert.ok(Object.isFrozen(c));
  });
  it('bad values are ConfigErrors with one clear line', () => {
    for (const env of [
      { GANTRY_PORT: '70000' },
      { GANTRY_PORT: 'http' },
      { GANTRY_PORT: '-1' },
      { GANTRY_LOG_LEVEL: 'loud' },
      { GANTRY_RATE_LIMIT_MULTIPLIER: '0' },
      { GANTRY_PUBLIC_URL: 'ftp://x' },
      { GANTRY_ALLOW_PRIVATE_NETWORKS: 'maybe' },
      { GANTRY_SCRYPT_COST: 'x' },
      { GANTRY_TRUSTED_PROXIES: '10.0.0.0/33' },
      { GANTRY_TRUSTED_PROXIES: '10.0.0.1,proxy' },
      { GANTRY_TRUSTED_PROXIES: 'fd00::/129' },
      { GANTRY_TRUSTED_PROXIES: '10.0.0.0/' },
    ]) {
      assert.throws(
        () => resolveConfig({}, { ...base, ...env }),
        (err: unknown) => err instanceof ConfigError && !err.message.includes('\n') && /GANTRY_/.test(err.message),
        JSON.stringify(env),
      );
    }
  });
});

describe('GANTRY_TRUSTED_PROXIES', () => {
  const base = { GANTRY_DATA_DIR: '/tmp/gantry-config-test' };
  it('defaults to none; takes IPv4 and IPv6 addresses and networks; the flag wins', () => {
    assert.deepEqual(resolveConfig({}, base).trustedProxies, []);
    assert.deepEqual(
      resolveConfig({}, { ...base, GANTRY_TRUSTED_PROXIES: ' 10.0.0.0/8, 192.0.2.7 ,fd00::/8,::1,' }).trustedProxies,
      [
        { address: '10.0.0.0', prefix: 8, family: 'ipv4' },
        { address: '192.0.2.7', prefix: 32, family: 'ipv4' },
        { address: 'fd00::', prefix: 8, family: 'ipv6' },
        { address: '::1', prefix: 128, family: 'ipv6' },
      ],
    );
    assert.deepEqual(
      resolveConfig({ trustedProxies: '127.0.0.1' }, { ...base, GANTRY_TRUSTED_PROXIES: '10.0.0.0/8' }).trustedProxies,
      [{ address: '127.0.0.1', prefix: 32, family: 'ipv4' }],
    );
  });

  it('the client address: the peer unless it is a trusted proxy; then the rightmost untrusted hop', () => {
    const trusted = trustedProxyTest(
      resolveConfig({}, { ...base, GANTRY_TRUSTED_PROXIES: '10.0.0.0/8,fd00::/8' }).trustedProxies,
    );
    // An untrusted peer's header is ignored, whatever it says.
    assert.equal(clientAddressFrom('198.51.100.9', '203.0.113.5', trusted), '198.51.100.9');
    assert.equal(clientAddressFrom('::ffff:198.51.100.9', '10.1.1.1', trusted), '198.51.100.9');
    // A trusted peer: its header names the client; a forged entry to the left is not believed.
    assert.equal(clientAddressFrom('10.0.0.2', '203.0.113.5', trusted), '203.0.113.5');
    assert.equal(clientAddressFrom('10.0.0.2', '1.2.3.4, 203.0.113.5', trusted), '203.0.113.5');
    assert.equal(clientAddressFrom('10.0.0.2', ['1.2.3.4, 203.0.113.5', '10.9.9.9'], trusted), '203.0.113.5');
    assert.equal(clientAddressFrom('::ffff:10.0.0.2', '203.0.113.5:4431, 10.0.0.3', trusted), '203.0.113.5');
    assert.equal(clientAddressFrom('fd00::2', '[2001:db8::7]:443', trusted), '2001:db8::7');
    // Every hop trusted: the leftmost. No header, or a malformed hop: the nearest trusted hop.
    assert.equal(clientAddressFrom('10.0.0.2', '10.3.3.3, 10.4.4.4', trusted), '10.3.3.3');
    assert.equal(clientAddressFrom('10.0.0.2', undefined, trusted), '10.0.0.2');
    assert.equal(clientAddressFrom('10.0.0.2', 'unknown, 10.4.4.4', trusted), '10.4.4.4');
    assert.equal(clientAddressFrom('10.0.0.2', '', trusted), '10.0.0.2');
  });
});

describe('logger', () => {
  it('redacts secret-named fields and writes one JSON object per line', () => {
    const lines: string[] = [];
    const logger = createLogger('info', (l) => lines.push(l));
    logger.debug('hidden');
    logger.info('x', {
      password: 'p4ss',
      refreshToken: 'tok',
      code: '123456',
      authorization: 'Bearer z',
      apiKey: 'k',
      userId: 'u1',
    });
    assert.equal(lines.length, 1);
    assert.ok(lines[0].endsWith('\n'));
    const entry = JSON.parse(lines[0]);
    assert.equal(entry.userId, 'u1');
    for (const name of ['password', 'refreshToken', 'code', 'authorization', 'apiKey'])
      assert.equal(entry[name], '[redacted]');
  });
});

describe('crypto', () => {
  it('scrypt hashes verify only the right password; safeEqual; randomDigits', async () => {
    const hash = await hashPassword('right password', 1024);
    assert.match(hash, /^scrypt\$1024\$/);
    assert.equal(await verifyPassword('right password', hash), true);
    assert.equal(await verifyPassword('wrong password', hash), false);
    assert.equal(await verifyPassword('x', 'not-a-hash'), false);
    assert.equal(safeEqual('abc', 'abc'), true);
    assert.equal(safeEqual('abc', 'abd'), false);
    assert.equal(safeEqual('abc', 'abcd'), false);
    assert.match(randomDigits(6), /^\d{6}$/);
  });
});

describe('secrets', () => {
  it('first start writes secrets.json 0600 once; later loads (and racing ones) read the same keys; env overrides', async () => {
    const { mkdtempSync, rmSync, statSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const { loadSecrets } = await import('../../src/lib/secrets.js');
    const dir = mkdtempSync(path.join(tmpdir(), 'gantry-secrets-'));
    try {
      const first = loadSecrets(dir, {});
      assert.equal(statSync(path.join(dir, 'secrets.json')).mode & 0o777, 0o600);
      assert.equal(first.jwtSigningKey.length, 32);
      assert.deepEqual(loadSecrets(dir, {}).jwtSigningKey, first.jwtSigningKey);
      const override = Buffer.alloc(32, 9).toString('base64');
      assert.deepEqual(loadSecrets(dir, { GANTRY_SECRET_JWT_KEY: override }).jwtSigningKey, Buffer.alloc(32, 9));
      assert.throws(() => loadSecrets(dir, { GANTRY_SECRET_JWT_KEY: 'c2hvcnQ=' }), ConfigError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
