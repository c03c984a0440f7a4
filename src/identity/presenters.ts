import type { UserRow } from './store.js';

/** The user as the sign-in API shows it (docs/interface.md, Sign-in API): never a hash or internal flag. */
export function presentUser(user: UserRow) {
  return {
    id: user.id,
    email: user.email,
    fullName: user.full_name,
    username: user.username,
    avatarUrl: user.avatar_url,
    emailVerified: user.email_verified_at !== null,
    createdAt: user.created_at,
  };
}
