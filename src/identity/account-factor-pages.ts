import type { ServerRoute } from '@hapi/hapi';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import type { AccountCenter } from './account-center.js';
import { A, recoveryCodesPage, totpSetupPage } from './account-views.js';
import { SIGN_IN_LIMITS } from './limits.js';
import { credentialField } from './page-factors.js';
import { qrSvg } from './totp.js';

/** The account center's passkeys and two-step sign-in (docs/identity.md, Account center). */
export function accountFactorPages(app: PluginDeps, center: AccountCenter): ServerRoute[] {
  const { identity } = app.services;
  const { action, refused, done, showPage, field, me } = center;
  return [
    action(
      `${A}/passkeys/options`,
      'identity.account.passkey-options',
      async (s) =>
        s.h
          .response({ options: await identity.passkeys.registrationOptions(await me(s)) })
          .type('application/json; charset=utf-8')
          .header('Cache-Control', 'no-store'),
      { json: true, rateLimit: SIGN_IN_LIMITS.passkeys },
    ),
    action(`${A}/passkeys`, 'identity.account.passkey-add', async (s) => {
      const credential = credentialField<RegistrationResponseJSON>(s.body);
      const name = field(s, 'name').trim() || null;
      try {
        if (!credential) throw new DomainError('VALIDATION_FAILED', 'No passkey was received. Try adding it again.');
        if (name && (name.length > 60 || /[\p{Cc}]/u.test(name)))
          throw new DomainError('VALIDATION_FAILED', 'A passkey name is one line of at most 60 characters.');
        await identity.passkeys.register(await me(s), credential, name);
      } catch (err) {
        return refused(s, err);
      }
      return done(s.h, 'passkey-added');
    }),
    action(`${A}/passkeys/{passkeyId}/remove`, 'identity.account.passkey-remove', async (s) => {
      try {
        await identity.passkeys.remove(s.session.userId, String(s.request.params.passkeyId));
      } catch (err) {
        return refused(s, err);
      }
      return done(s.h, 'passkey-removed');
    }),
    action(`${A}/two-step/setup`, 'identity.account.two-step-setup', async (s) => {
      let setup: { secret: string; otpauthUrl: string };
      try {
        setup = await identity.factors.setupTotp(await me(s));
      } catch (err) {
        return refused(s, err);
      }
      const csrf = center.csrf(s);
      return showPage(s, totpSetupPage({ csrf, secret: setup.secret, qrSvg: await qrSvg(setup.otpauthUrl) }));
    }),
    action(
      `${A}/two-step/enable`,
      'identity.account.two-step-enable',
      async (s) => {
        const user = await me(s);
        try {
          const { recoveryCodes } = await identity.factors.enableTotp(user, s.session.sessionId, field(s, 'code'));
          return showPage(s, recoveryCodesPage(recoveryCodes, 'Two-step sign-in is on.'));
        } catch (err) {
          const pending = await identity.factors.pendingTotp(user);
          if (!(err instanceof DomainError) || err.status >= 500 || !pending) return refused(s, err);
          const csrf = center.csrf(s);
          const message =
            err.code === 'FORBIDDEN' ? 'That code is not right. Enter the code the app shows now.' : err.message;
          const view = totpSetupPage({
            csrf,
            secret: pending.secret,
            qrSvg: await qrSvg(pending.otpauthUrl),
            error: message,
          });
          return showPage(s, view, err.status);
        }
      },
      { rateLimit: SIGN_IN_LIMITS.secondFactor },
    ),
    action(
      `${A}/two-step/disable`,
      'identity.account.two-step-disable',
      async (s) => {
        try {
          await identity.factors.disableTotp(await me(s), field(s, 'code'));
        } catch (err) {
          return refused(s, err, 'two-step-off');
        }
        return done(s.h, 'two-step-off');
      },
      { rateLimit: SIGN_IN_LIMITS.secondFactor },
    ),
    action(
      `${A}/two-step/recovery-codes`,
      'identity.account.recovery-codes',
      async (s) => {
        try {
          const { recoveryCodes } = await identity.factors.regenerateRecoveryCodes(await me(s), field(s, 'code'));
          return showPage(s, recoveryCodesPage(recoveryCodes, 'New recovery codes: the old ones no longer work.'));
        } catch (err) {
          return refused(s, err, 'recovery-codes');
        }
      },
      { rateLimit: SIGN_IN_LIMITS.secondFactor },
    ),
  ];
}
