import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import { pageRoute } from '../http/page-forms.js';
import { createAccountCenter, NOTICES } from './account-center.js';
import { accountFactorPages } from './account-factor-pages.js';
import { A } from './account-views.js';
import { SIGN_IN_LIMITS } from './limits.js';
import { emailBody } from './schemas.js';

/**
 * The account center (docs/identity.md, Account center): GET /account and its forms, each
 * through the center's `action` (account-center.ts); passkeys and two-step sign-in in
 * account-factor-pages.ts.
 */
export function accountPages(app: PluginDeps): ServerRoute[] {
  const { identity, oauth } = app.services;
  const center = createAccountCenter(app);
  const { signIn, signedIn, render, refused, done, signedOut, field, action } = center;

  return [
    {
      method: 'GET',
      path: A,
      options: { id: 'identity.account', ...pageRoute('The account center, or the sign-in form before it') },
      handler: async (request, h) => {
        const found = await signedIn(request);
        if (!found) return signIn.show(request, h, A, { status: 200 });
        const key = typeof request.query.done === 'string' ? request.query.done : '';
        return render({ h, session: found.session, sessionValue: found.value }, { notice: NOTICES[key] });
      },
    },
    {
      method: 'POST',
      path: A,
      options: {
        id: 'identity.account.sign-in',
        ...pageRoute('Signed in: the account center, or the second step first'),
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 16 * 1024 },
      },
      handler: (request, h) => signIn.submit(request, h, A, (request.payload ?? {}) as Record<string, unknown>),
    },
    action(`${A}/name`, 'identity.account.name', async (s) => {
      try {
        await identity.updateFullName(s.session.userId, field(s, 'full_name'));
      } catch (err) {
        return refused(s, err, 'name');
      }
      return done(s.h, 'name');
    }),
    action(`${A}/email`, 'identity.account.email', async (s) => {
      const { value, error } = emailBody.validate({ email: field(s, 'new_email').trim() });
      try {
        if (error) throw new DomainError('VALIDATION_FAILED', 'Enter a valid new email address.');
        await identity.flows.requestEmailChange(s.session.userId, value.email, field(s, 'password'));
      } catch (err) {
        return refused(s, err, 'email');
      }
      return done(s.h, 'email');
    }),
    action(
      `${A}/password`,
      'identity.account.password',
      async (s) => {
        const next = field(s, 'new_password');
        try {
          if (next.length < 8 || next.length > 128)
            throw new DomainError('VALIDATION_FAILED', 'The new password needs 8 to 128 characters.');
          await identity.flows.changePassword(
            s.session.userId,
            s.session.sessionId,
            field(s, 'current_password'),
            next,
          );
        } catch (err) {
          return refused(s, err, 'password');
        }
        return done(s.h, 'password');
      },
      { rateLimit: SIGN_IN_LIMITS.changePassword },
    ),
    ...accountFactorPages(app, center),
    action(`${A}/sessions/{sessionId}/end`, 'identity.account.session-end', async (s) => {
      const id = String(s.request.params.sessionId);
      try {
        await identity.sessions.endOwn(s.session.userId, id);
      } catch (err) {
        return refused(s, err);
      }
      return id === s.session.sessionId ? signedOut(s.h) : done(s.h, 'session-ended');
    }),
    action(`${A}/apps/revoke`, 'identity.account.app-revoke', async (s) => {
      try {
        await oauth.revokeClientGrant(s.session.userId, field(s, 'client_id'));
      } catch (err) {
        return refused(s, err);
      }
      return done(s.h, 'app-revoked');
    }),
    action(`${A}/sign-out`, 'identity.account.sign-out', async (s) => {
      await identity.browserSessions.end(s.sessionValue);
      return signedOut(s.h);
    }),
  ];
}
