import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeUser } from '../helpers/factories.js';
import { mcpAuthorizeUrl, mcpSetup, mcpTokens, openConsent, submitConsent } from '../helpers/mcp-oauth.js';
import { pkcePair } from '../helpers/oauth.js';
import { asUser } from '../helpers/accounts.js';
import { addMember } from '../helpers/tenancy.js';

// The workspace choice spans every account of the user (docs/oauth.md, Workspace binding).
let t: TestApp;
before(async () => {
  t = await createTestApp({ env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
});
after(async () => t.close());

/** The select's groups in order: each account's label with its options' ids, and the selected ids. */
function groupedSelect(html: string) {
  const select = /<select id="workspace_id" name="workspace_id" required>([\s\S]*?)<\/select>/.exec(html);
  assert.ok(select, 'the consent page has a workspace_id select');
  const groups = [...select[1].matchAll(/<optgroup label="([^"]*)">([\s\S]*?)<\/optgroup>/g)].map((g) => ({
    label: g[1],
    ids: [...g[2].matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]),
  }));
  const selected = [...select[1].matchAll(/<option value="([^"]+)" selected>/g)].map((m) => m[1]);
  return { groups, selected };
}

/**
 * A user who owns their first account (with a second workspace), is a plain member of a second
 * account (in one of its extra workspaces, not the other), and has left a third one.
 */
async function twoAccounts() {
  const setup = await mcpSetup(t);
  const { accounts } = t.app.services;
  const research = await accounts.workspaces.create(asUser(setup.user.id), setup.account.id, 'Research');
  const otherOwner = await makeUser(t.app);
  const beta = await makeAccount(t.app, otherOwner.id, { legalName: 'Beta Holdings Ltd', displayName: 'Beta' });
  await addMember(t.app, beta.id, setup.user.id, 'member');
  const shared = await accounts.workspaces.create(asUser(otherOwner.id), beta.id, 'Shared');
  const secret = await accounts.workspaces.create(asUser(otherOwner.id), beta.id, 'Secret');
  await accounts.workspaces.addMember(asUser(otherOwner.id), beta.id, shared.id, {
    chainerId: setup.user.id,
    role: 'member',
  });
  const gamma = await makeAccount(t.app, otherOwner.id, { legalName: 'Gamma Ltd' });
  await addMember(t.app, gamma.id, setup.user.id, 'admin');
  await accounts.members.remove(asUser(otherOwner.id), gamma.id, setup.user.id, { releaseSeat: false });
  return { setup, research, beta, shared, secret, gamma };
}

describe('the workspace choice across accounts', () => {
  test("every account's usable workspaces, grouped by account, the current account's default preselected", async () => {
    const { setup, research, beta, shared } = await twoAccounts();
    const { page } = await openConsent(t, mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge), setup.user);
    assert.equal(page.statusCode, 200);
    const { groups, selected } = groupedSelect(page.payload);
    assert.deepEqual(groups, [
      { label: 'Test Org Ltd', ids: [setup.defaultWorkspace, research.id] },
      { label: 'Beta', ids: [beta.defaultWorkspaceId, shared.id] },
    ]);
    assert.deepEqual(selected, [setup.defaultWorkspace]);
  });

  test("a plain member is not offered the account's workspaces they are not in, nor a left account's", async () => {
    const { setup, secret, gamma } = await twoAccounts();
    const { page } = await openConsent(t, mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge), setup.user);
    assert.doesNotMatch(page.payload, new RegExp(secret.id));
    assert.doesNotMatch(page.payload, new RegExp(gamma.defaultWorkspaceId));
    assert.doesNotMatch(page.payload, /Gamma Ltd/);
    for (const workspaceId of [secret.id, gamma.defaultWorkspaceId]) {
      const consent = await openConsent(t, mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge), setup.user);
      const res = await submitConsent(t, consent, { decision: 'allow', workspace_id: workspaceId });
      assert.equal(res.statusCode, 400, workspaceId);
      assert.match(res.payload, /Choose one of your workspaces/);
    }
  });

  test("a workspace of the second account binds the grant and the token's workspace claim", async () => {
    const { setup, shared } = await twoAccounts();
    const tokens = await mcpTokens(t, setup, { workspaceId: shared.id });
    assert.equal(decodeJwt(tokens.access_token).workspace_id, shared.id);
    const grants = await t.app.kernel.db
      .selectFrom('oauth_grants')
      .select(['workspace_id'])
      .where('user_id', '=', setup.user.id)
      .execute();
    assert.deepEqual(grants, [{ workspace_id: shared.id }]);
  });
});
