import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, resolveConfig } from '../../src/config.js';

// GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS and GANTRY_OAUTH_CLIENT_METADATA_HOSTS (docs/oauth.md,
// Client ID Metadata Documents).
describe('the metadata document settings', () => {
  const base = { GANTRY_DATA_DIR: '/tmp/gantry-config-test' };
  const policy = (env: NodeJS.ProcessEnv) => resolveConfig({}, { ...base, ...env }).oauthMetadataDocuments;

  it('default: on, from any host', () => {
    assert.deepEqual(policy({}), { enabled: true, trustedHosts: [] });
    assert.ok(Object.isFrozen(policy({}).trustedHosts));
  });

  it('on and off in the words operators use', () => {
    for (const on of ['on', 'true', '1', 'yes', 'ON'])
      assert.equal(policy({ GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS: on }).enabled, true);
    for (const off of ['off', 'false', '0', 'no', 'Off'])
      assert.equal(policy({ GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS: off }).enabled, false);
  });

  it('hosts: comma or space separated, lower-cased, international names in punycode, wildcards kept', () => {
    assert.deepEqual(
      policy({ GANTRY_OAUTH_CLIENT_METADATA_HOSTS: ' Claude.AI, *.ChatGPT.com  bücher.example,claude.ai,[::1] ' })
        .trustedHosts,
      ['claude.ai', '*.chatgpt.com', 'xn--bcher-kva.example', '[::1]'],
    );
  });

  it('a value that is no host list stops start-up naming the variable', () => {
    for (const env of [
      { GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS: 'maybe' },
      { GANTRY_OAUTH_CLIENT_METADATA_HOSTS: 'https://claude.ai' },
      { GANTRY_OAUTH_CLIENT_METADATA_HOSTS: 'claude.ai:443' },
      { GANTRY_OAUTH_CLIENT_METADATA_HOSTS: 'claude.ai/oauth' },
      { GANTRY_OAUTH_CLIENT_METADATA_HOSTS: '*' },
      { GANTRY_OAUTH_CLIENT_METADATA_HOSTS: 'a.*.example' },
      { GANTRY_OAUTH_CLIENT_METADATA_HOSTS: 'user@claude.ai' },
    ]) {
      assert.throws(
        () => policy(env),
        (err: unknown) =>
          err instanceof ConfigError && !err.message.includes('\n') && err.message.startsWith(Object.keys(env)[0]),
        JSON.stringify(env),
      );
    }
  });
});
