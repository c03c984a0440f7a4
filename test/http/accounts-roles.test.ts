import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { OPERATOR } from '../../src/accounts/access.js';
import { makeTeam, makeUser, signedInUser } from '../helpers/factories.js';
import { call } from '../helpers/accounts.js';

type Team = Awaited<ReturnType<typeof makeTeam>>;
type Caller = 'owner' | 'admin' | 'analyst' | 'billing' | 'viewer' | 'member' | 'non-member';
const ALL: Caller[] = ['owner', 'admin', 'analyst', 'billing', 'viewer', 'member'];
const OWNER_OR_ADMIN: Caller[] = ['owner', 'admin'];
const CALLERS: Caller[] = [...ALL, 'non-member'];

interface Row {
  name: string;
  method: string;
  allowed: Caller[];
  status: number;
  /** Builds the request on a fresh team (creating whatever the call targets). */
  setup(t: TestApp, team: Team): Promise<{ path: string; body?: unknown }>;
}

let n = 0;
const uniq = () => `${Date.now().toString(36)}${n++}`;

const rows: Row[] = [
  {
    name: 'GET /accounts/:id',
    method: 'GET',
    allowed: ALL,
    status: 200,
    setup: async (_t, team) => ({ path: `accounts/${team.account.id}` }),
  },
  {
    name: 'PATCH /accounts/:id',
    method: 'PATCH',
    allowed: OWNER_OR_ADMIN,
    status: 200,
    setup: async (_t, team) => ({ path: `accounts/${team.account.id}`, body: { displayName: 'Renamed' } }),
  },
  {
    name: 'DELETE /accounts/:id',
    method: 'DELETE',
    allowed: ['owner'],
    status: 200,
    setup: async (_t, team) => ({ path: `accounts/${team.account.id}` }),
  },
  {
    name: 'GET members',
    method: 'GET',
    allowed: ALL,
    status: 200,
    setup: async (_t, team) => ({ path: `accounts/${team.account.id}/members` }),
  },
  {
    name: 'POST members',
    method: 'POST',
    allowed: OWNER_OR_ADMIN,
    status: 201,
    setup: async (t, team) => ({
      path: `accounts/${team.account.id}/members`,
      body: { chainerId: (await makeUser(t.app)).id, role: 'analyst' },
    }),
  },
  {
    name: 'PATCH member',
    method: 'PATCH',
    allowed: OWNER_OR_ADMIN,
    status: 200,
    setup: async (t, team) => {
      const target = await makeUser(t.app);
      await t.app.services.accounts.members.add(OPERATOR, team.account.id, { chainerId: target.id, role: 'member' });
      return { path: `accounts/${team.account.id}/members/${target.id}`, body: { role: 'viewer' } };
    },
  },
  {
    name: 'DELETE member',
    method: 'DELETE',
    allowed: OWNER_OR_ADMIN,
    status: 200,
    setup: async (t, team) => {
      const target = await makeUser(t.app);
      await t.app.services.accounts.members.add(OPERATOR, team.account.id, { chainerId: target.id, role: 'member' });
      return { path: `accounts/${team.account.id}/members/${target.id}` };
    },
  },
  {
    name: 'GET logs',
    method: 'GET',
    allowed: OWNER_OR_ADMIN,
    status: 200,
    setup: async (_t, team) => ({ path: `accounts/${team.account.id}/logs` }),
  },
  {
    name: 'POST invitations',
    method: 'POST',
    allowed: OWNER_OR_ADMIN,
    status: 201,
    setup: async (_t, team) => ({
      path: `accounts/${team.account.id}/invitations`,
      body: { email: `inv-${uniq()}@example.test`, role: 'viewer' },
    }),
  },
  {
    name: 'GET invitations',
    method: 'GET',
    allowed: OWNER_OR_ADMIN,
    status: 200,
    setup: async (_t, team) => ({ path: `accounts/${team.account.id}/invitations` }),
  },
  {
    name: 'DELETE invitation',
    method: 'DELETE',
    allowed: OWNER_OR_ADMIN,
    status: 200,
    setup: async (t, team) => {
      const inv = await t.app.services.accounts.invitations.create(OPERATOR, team.account.id, {
        email: `inv-${uniq()}@example.test`,
        role: 'member',
      });
      return { path: `accounts/${team.account.id}/invitations/${inv.id}` };
    },
  },
  {
    name: 'POST invitation resend',
    method: 'POST',
    allowed: OWNER_OR_ADMIN,
    status: 200,
    setup: async (t, team) => {
      const inv = await t.app.services.accounts.invitations.create(OPERATOR, team.account.id, {
        email: `inv-${uniq()}@example.test`,
        role: 'member',
      });
      return { path: `accounts/${team.account.id}/invitations/${inv.id}/resend` };
    },
  },
  {
    name: 'GET workspaces',
    method: 'GET',
    allowed: ALL,
    status: 200,
    setup: async (_t, team) => ({ path: `accounts/${team.account.id}/workspaces` }),
  },
  {
    name: 'POST workspaces',
    method: 'POST',
    allowed: OWNER_OR_ADMIN,
    status: 201,
    setup: async (_t, team) => ({ path: `accounts/${team.account.id}/workspaces`, body: { name: `WS ${uniq()}` } }),
  },
  {
    name: 'PATCH workspace',
    method: 'PATCH',
    allowed: OWNER_OR_ADMIN,
    status: 200,
    setup: async (t, team) => {
      const ws = await t.app.services.accounts.workspaces.create(OPERATOR, team.account.id, `WS ${uniq()}`);
      return { path: `accounts/${team.account.id}/workspaces/${ws.id}`, body: { name: `Renamed ${uniq()}` } };
    },
  },
  {
    name: 'DELETE workspace',
    method: 'DELETE',
    allowed: OWNER_OR_ADMIN,
    status: 200,
    setup: async (t, team) => {
      const ws = await t.app.services.accounts.workspaces.create(OPERATOR, team.account.id, `WS ${uniq()}`);
      return { path: `accounts/${team.account.id}/workspaces/${ws.id}` };
    },
  },
  {
    name: 'GET workspace members',
    method: 'GET',
    allowed: ALL,
    status: 200,
    setup: async (_t, team) => ({
      path: `accounts/${team.account.id}/workspaces/${team.account.defaultWorkspaceId}/members`,
    }),
  },
  {
    name: 'POST workspace members',
    method: 'POST',
    allowed: OWNER_OR_ADMIN,
    status: 201,
    setup: async (t, team) => {
      const ws = await t.app.services.accounts.workspaces.create(OPERATOR, team.account.id, `WS ${uniq()}`);
      return {
        path: `accounts/${team.account.id}/workspaces/${ws.id}/members`,
        body: { chainerId: team.members.member.user.id },
      };
    },
  },
  {
    name: 'DELETE workspace member',
    method: 'DELETE',
    allowed: OWNER_OR_ADMIN,
    status: 200,
    setup: async (t, team) => {
      const ws = await t.app.services.accounts.workspaces.create(OPERATOR, team.account.id, `WS ${uniq()}`);
      await t.app.services.accounts.workspaces.addMember(OPERATOR, team.account.id, ws.id, {
        chainerId: team.members.viewer.user.id,
        role: 'member',
      });
      return { path: `accounts/${team.account.id}/workspaces/${ws.id}/members/${team.members.viewer.user.id}` };
    },
  },
  {
    name: 'POST ownership-transfer',
    method: 'POST',
    allowed: ['owner'],
    status: 201,
    setup: async (_t, team) => ({
      path: `accounts/${team.account.id}/ownership-transfer`,
      body: { chainerId: team.members.analyst.user.id },
    }),
  },
  {
    name: 'POST api-keys',
    method: 'POST',
    allowed: ALL,
    status: 201,
    setup: async (_t, team) => ({ path: `accounts/${team.account.id}/api-keys`, body: { name: 'ci' } }),
  },
  {
    name: 'GET api-keys',
    method: 'GET',
    allowed: ALL,
    status: 200,
    setup: async (_t, team) => ({ path: `accounts/${team.account.id}/api-keys` }),
  },
];

describe('accounts: every role against every endpoint', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  const headersOf = async (team: Team, caller: Caller) =>
    caller === 'owner'
      ? team.owner.headers
      : caller === 'non-member'
        ? (await signedInUser(t.app)).headers
        : team.members[caller].headers;
  const auditCount = async (accountId: string) =>
    (await t.app.kernel.db.selectFrom('account_audit_log').select('seq').where('account_id', '=', accountId).execute())
      .length;

  for (const row of rows) {
    describe(row.name, () => {
      for (const caller of CALLERS) {
        const allowed = row.allowed.includes(caller);
        it(`${caller}: ${allowed ? row.status : 403}`, async () => {
          const team = await makeTeam(t.app, ['admin', 'analyst', 'billing', 'viewer', 'member']);
          const { path, body } = await row.setup(t, team);
          const before = await auditCount(team.account.id);
          const res = await call(t, row.method, path, await headersOf(team, caller), body);
          if (allowed) {
            assert.equal(res.status, row.status, JSON.stringify(res.body.error));
            assert.equal(res.body.error, null);
            // every mutating call leaves an audit entry; reads leave none
            const after = await auditCount(team.account.id);
            if (row.method === 'GET') assert.equal(after, before);
            else assert.ok(after > before, `${row.name} wrote no audit entry`);
          } else {
            assert.equal(res.status, 403, JSON.stringify(res.body));
            assert.equal(res.body.error!.code, 'FORBIDDEN');
            assert.equal(await auditCount(team.account.id), before, 'a refused call changed nothing');
          }
        });
      }
    });
  }
});
