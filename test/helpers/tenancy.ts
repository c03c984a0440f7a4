import type { AppContext } from '../../src/app.js';

/**
 * Attaches a user to an account (and its default workspace) with a role. Tests use it to
 * set up membership directly; the member endpoints have their own tests.
 */
export async function addMember(app: AppContext, accountId: string, userId: string, role: string): Promise<void> {
  const { db, clock } = app.kernel;
  const now = clock.now().toISOString();
  await db
    .insertInto('account_members')
    .values({
      account_id: accountId,
      user_id: userId,
      role,
      status: 'active',
      invited_by: null,
      joined_at: now,
      created_at: now,
    })
    .execute();
  const ws = await db
    .selectFrom('workspaces')
    .select('id')
    .where('account_id', '=', accountId)
    .where('is_default', '=', 1)
    .executeTakeFirstOrThrow();
  await db
    .insertInto('workspace_members')
    .values({ workspace_id: ws.id, user_id: userId, role, created_at: now })
    .execute();
}
