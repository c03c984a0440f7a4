import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const unit = readFileSync(`${root}systemd/gantry.service`, 'utf8');
const directive = (name: string) =>
  unit
    .split('\n')
    .filter((l) => l.startsWith(`${name}=`))
    .map((l) => l.slice(name.length + 1));

describe('systemd unit', () => {
  it('runs as its own user with a state directory and the data dir there', () => {
    assert.deepEqual(directive('User'), ['gantry']);
    assert.deepEqual(directive('StateDirectory'), ['gantry']);
    assert.ok(directive('Environment').includes('GANTRY_DATA_DIR=/var/lib/gantry'));
    assert.match(directive('ExecStart')[0], /\/opt\/gantry\/bin\/gantry serve$/);
  });
  it('is hardened, restarts on failure and stops within 10 s on SIGTERM', () => {
    for (const [name, value] of [
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['PrivateDevices', 'yes'],
      ['Restart', 'on-failure'],
      ['TimeoutStopSec', '10'],
      ['KillSignal', 'SIGTERM'],
    ]) {
      assert.deepEqual(directive(name), [value], name);
    }
    assert.match(directive('RestrictAddressFamilies')[0], /AF_INET AF_INET6 AF_UNIX/);
    // V8's JIT needs W+X memory: this directive would crash node.
    assert.deepEqual(directive('MemoryDenyWriteExecute'), []);
  });
});

describe('install.sh', () => {
  it('is valid bash', () => {
    execFileSync('bash', ['-n', `${root}install.sh`]);
  });
  it('--dry-run shows every step and changes nothing', () => {
    const res = spawnSync('bash', [`${root}install.sh`, '--dry-run'], {
      encoding: 'utf8',
      env: { ...process.env, PREFIX: '/nonexistent/opt/gantry' },
    });
    if (res.status !== 0 && /not built/.test(res.stderr)) return assert.match(res.stderr, /npm run build/);
    assert.equal(res.status, 0, res.stderr);
    for (const step of [
      /useradd --system .*gantry|user gantry exists/,
      /install -d -m 0700 -o gantry -g gantry \/var\/lib\/gantry/,
      /\/nonexistent\/opt\/gantry\.new/,
      /gantry migrate/,
      /gantry\.service/,
      /systemctl enable gantry\.service/,
    ]) {
      assert.match(res.stdout, step);
    }
  });
  it('refuses politely when not root', () => {
    const asNobody = process.getuid?.() === 0;
    // nobody may not be able to read the checkout (a clone inside a private directory): the
    // script goes to bash on stdin, from a directory everyone can enter.
    const res = asNobody
      ? spawnSync('runuser', ['-u', 'nobody', '--', 'bash', '-s'], {
          encoding: 'utf8',
          input: readFileSync(`${root}install.sh`),
          cwd: '/',
        })
      : spawnSync('bash', [`${root}install.sh`], { encoding: 'utf8' });
    assert.equal(res.status, 1);
    assert.match(res.stderr, /please run me as root/);
  });
});
