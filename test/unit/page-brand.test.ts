import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, resolveConfig } from '../../src/config.js';
import { createPageKit } from '../../src/http/pages.js';
import { pagePercent } from '../../src/status/uptime.js';

const PUBLIC = 'https://gantry.example.test';
const brandOf = (env: NodeJS.ProcessEnv) =>
  resolveConfig({ dataDir: '/tmp/unused' }, { GANTRY_PUBLIC_URL: PUBLIC, ...env }).brand;

describe('GANTRY_BRAND_NAME and GANTRY_BRAND_LOGO_URL', () => {
  it('default to Gantry and no logo', () => {
    assert.deepEqual(brandOf({}), { name: 'Gantry', logoUrl: null });
    assert.deepEqual(brandOf({ GANTRY_BRAND_NAME: '   ' }), { name: 'Gantry', logoUrl: null });
  });

  it('take a name and an https logo, a path on this server, or a same-origin URL', () => {
    assert.deepEqual(
      brandOf({ GANTRY_BRAND_NAME: ' Acme Cloud ', GANTRY_BRAND_LOGO_URL: 'https://cdn.acme.test/l.svg' }),
      {
        name: 'Acme Cloud',
        logoUrl: 'https://cdn.acme.test/l.svg',
      },
    );
    assert.equal(brandOf({ GANTRY_BRAND_LOGO_URL: '/brand/logo.png' }).logoUrl, '/brand/logo.png');
    assert.equal(
      resolveConfig(
        { dataDir: '/tmp/unused' },
        { GANTRY_PUBLIC_URL: 'http://127.0.0.1:8080', GANTRY_BRAND_LOGO_URL: 'http://127.0.0.1:8080/logo.png' },
      ).brand.logoUrl,
      'http://127.0.0.1:8080/logo.png',
    );
  });

  it('refuse plain http elsewhere, other schemes, protocol-relative URLs and credentials, naming the variable', () => {
    for (const bad of [
      'http://cdn.acme.test/l.svg',
      'javascript:alert(1)',
      'data:image/png;base64,AAAA',
      '//cdn.acme.test/l.svg',
      'https://user:pw@cdn.acme.test/l.svg',
      'logo.png',
      '/a"onerror="x',
    ])
      assert.throws(
        () => brandOf({ GANTRY_BRAND_LOGO_URL: bad }),
        (err: Error) => {
          assert.ok(err instanceof ConfigError);
          assert.match(err.message, /^GANTRY_BRAND_LOGO_URL must be an https URL or a path starting with \//);
          return true;
        },
      );
    assert.throws(() => brandOf({ GANTRY_BRAND_NAME: 'x'.repeat(61) }), /GANTRY_BRAND_NAME must be one line/);
    assert.throws(() => brandOf({ GANTRY_BRAND_NAME: 'two\nlines' }), /GANTRY_BRAND_NAME must be one line/);
  });

  it("the CSP allows images only from the logo (its origin, or self for a path), else from self (the brand's icon)", () => {
    const csp = (logoUrl: string | null) => createPageKit({ name: 'Acme', logoUrl }).csp();
    assert.equal(
      csp(null),
      "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    assert.match(csp('https://cdn.acme.test/a/l.svg'), /; img-src https:\/\/cdn\.acme\.test; /);
    assert.match(csp('/logo.png'), /; img-src 'self'; /);
    for (const logo of [null, 'https://cdn.acme.test/l.svg'])
      assert.doesNotMatch(csp(logo), /unsafe-inline|script-src|\*/);
  });

  it('the layout escapes the name and shows the logo as decoration beside it', () => {
    const kit = createPageKit({ name: 'Acme <&> Co', logoUrl: 'https://cdn.acme.test/l.svg?a=1&b=2' });
    const html = kit.document({ title: 'Sign in', body: '<h1>x</h1>' });
    assert.match(html, /<title>Sign in · Acme &lt;&amp;&gt; Co<\/title>/);
    assert.match(
      html,
      /<header class="brand"><img src="https:\/\/cdn\.acme\.test\/l\.svg\?a=1&amp;b=2" alt=""><span>Acme &lt;&amp;&gt; Co<\/span><\/header>/,
    );
    assert.match(html, new RegExp(`<link rel="stylesheet" href="${kit.stylesheetPath.replace(/\./g, '\\.')}">`));
  });
});

describe('uptime on the status page', () => {
  it('has two decimals, cut rather than rounded, so only no downtime at all reads 100.00%', () => {
    assert.equal(pagePercent(0.937224), '93.72');
    assert.equal(pagePercent(0.9372), '93.72', 'binary noise does not cost a hundredth');
    assert.equal(pagePercent(0.93729), '93.72');
    assert.equal(pagePercent(0.99999), '99.99');
    assert.equal(pagePercent(0.999999999), '99.99');
    assert.equal(pagePercent(1), '100.00');
    assert.equal(pagePercent(0.5), '50.00');
    assert.equal(pagePercent(0), '0.00');
  });
});
