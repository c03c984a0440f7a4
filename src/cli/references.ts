import type { AppContext } from '../app-types.js';
import { DomainError } from '../http/errors.js';
import { UsageError, type AnswerCheck } from './io.js';

/**
 * What an operator names a user, an account or a client by: what they know (an email, a slug,
 * a client's name) as well as the id. The services say what a word matches; here one match is
 * taken, none is NOT_FOUND, and several are refused with every candidate's id, never guessed
 * (docs/kernel.md, CLI).
 */
interface Candidate<T> {
  id: string;
  label: string;
  value: T;
}

function one<T>(kind: string, by: string, ref: string, matches: Candidate<T>[]): Candidate<T> {
  if (matches.length === 1) return matches[0];
  if (matches.length === 0)
    throw new DomainError('NOT_FOUND', `${kind[0].toUpperCase()}${kind.slice(1)} not found: no ${by} "${ref}"`);
  throw new UsageError(
    `"${ref}" names ${matches.length} ${kind}s: ${matches.map((m) => `${m.id} (${m.label})`).join(', ')}; give the id`,
  );
}

/** A user by id or email; `label` says who it is in a sentence ("a@x.test (id ...)"). */
export async function userRef(app: AppContext, ref: string) {
  const user = await app.services.identity.findUserByReference(ref);
  const found = one('user', 'id or email', ref, user ? [{ id: user.id, label: user.email, value: user }] : []);
  return { id: found.id, email: found.value.email, label: `${found.value.email} (id ${found.id})` };
}

/** An account by id or slug. */
export async function accountRef(app: AppContext, ref: string) {
  const matches = await app.services.accounts.lookup(ref);
  const found = one(
    'account',
    'id or slug',
    ref,
    matches.map((a) => ({ id: a.id, label: `slug ${a.slug}, ${a.status}`, value: a })),
  );
  return { ...found.value, label: `'${found.value.slug}' (id ${found.id})` };
}

/** A client by id or name; two clients of one name are refused, listing both ids. */
export async function clientRef(app: AppContext, ref: string) {
  const matches = await app.services.oauth.clients.lookup(ref);
  const found = one(
    'client',
    'id or name',
    ref,
    matches.map((c) => ({
      id: c.clientId,
      label: `${c.name}, ${c.registration}, created ${c.createdAt}`,
      value: c,
    })),
  );
  return { ...found.value, label: `'${found.value.name}' (id ${found.id})` };
}

/** A prompt's check that the answer names a user. */
export const namesUser =
  (app: AppContext): AnswerCheck =>
  async (answer) =>
    (await app.services.identity.findUserByReference(answer)) ? null : `no user "${answer}" (give an id or an email)`;
