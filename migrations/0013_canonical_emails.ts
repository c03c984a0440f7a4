import { canonicalEmail } from '../src/identity/email.js';
import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0013_canonical_emails',
  async up(db) {
    // Addresses stored before the canonical form (docs/kernel.md, Email addresses) were only
    // trimmed and lower-cased: `x@xn--bcher-kva.example` no longer matched its own lookups and
    // `x@bücher.example` could register as a second account for the same mailbox. Each row moves
    // to its canonical form, except where that form is refused or another user's row has (or
    // would take) it: those stay as they are, reached by the lookups' legacy fallback. Never
    // throws on data, so a server always starts.
    const users: Array<{ id: string; email: string }> = await db.selectFrom('users').select(['id', 'email']).execute();
    const stored = new Set(users.map((u) => u.email));
    const claims = new Map<string, number>();
    const targets = users.map((u) => {
      const canonical = canonicalEmail(u.email);
      const key = canonical.ok ? canonical.email : u.email;
      claims.set(key, (claims.get(key) ?? 0) + 1);
      return canonical.ok && canonical.email !== u.email ? canonical.email : null;
    });
    const moved = new Map<string, string>();
    for (const [i, user] of users.entries()) {
      const target = targets[i];
      if (!target || claims.get(target) !== 1 || stored.has(target)) continue;
      await db.updateTable('users').set({ email: target }).where('id', '=', user.id).execute();
      moved.set(user.email, target);
    }

    // An invitation follows its user's address; one to an address with no user takes the
    // canonical form, so it meets the user who registers it now.
    const invitations: Array<{ id: string; email: string }> = await db
      .selectFrom('account_invitations')
      .select(['id', 'email'])
      .execute();
    for (const invitation of invitations) {
      const canonical = canonicalEmail(invitation.email);
      const target =
        moved.get(invitation.email) ?? (canonical.ok && !stored.has(invitation.email) ? canonical.email : null);
      if (target && target !== invitation.email)
        await db.updateTable('account_invitations').set({ email: target }).where('id', '=', invitation.id).execute();
    }
  },
};
