import assert from 'node:assert/strict';
import type { AppContext } from '../../src/app.js';
import type { TestApp } from './app.js';
import { userPrincipal } from '../../src/http/auth.js';

interface Body<T = any> {
  data: T;
  meta: Record<string, any>;
  error: { code: string; message: string; details?: unknown } | null;
}

/** Injects and returns status and parsed body. */
export async function call<T = any>(
  t: TestApp,
  method: string,
  url: string,
  headers: Record<string, string> = {},
  payload?: unknown,
) {
  const res = await t.inject({
    method,
    url: url.startsWith('/') ? url : `/api/v1/${url}`,
    headers,
    payload: payload as object | undefined,
  });
  return { status: res.statusCode, body: res.result as Body<T>, headers: res.headers };
}

/** Audit entries of an account, oldest first. */
export async function auditOf(app: AppContext, accountId: string) {
  const rows = await app.kernel.db
    .selectFrom('account_audit_log')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    action: r.action,
    actorId: r.actor_id,
    actorUsername: r.actor_username,
    targetId: r.target_id,
    metadata: JSON.parse(r.metadata) as Record<string, any>,
  }));
}

/** The newest audit entry with this action, asserted to exist. */
export async function lastAudit(app: AppContext, accountId: string, action: string) {
  const entries = (await auditOf(app, accountId)).filter((e) => e.action === action);
  assert.ok(entries.length > 0, `expected an audit entry ${action}`);
  return entries[entries.length - 1];
}

/** A user's first-party session principal, to call an accounts use case as that user. */
export const asUser = userPrincipal;
