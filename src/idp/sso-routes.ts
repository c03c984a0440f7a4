import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import * as oidc from 'openid-client';
import type { PluginDeps } from '../services.js';
import { messagePage, page, pageRoute, redirect } from '../http/page-forms.js';
import { open, seal, SealError } from '../lib/sealed.js';
import { continueSignIn, signInBrowser } from '../identity/page-factors.js';
import { createSsoSignIn } from './sso.js';

import { SSO_START_PATH } from './service.js';
const CALLBACK_PATH = '/auth/sso/callback';
const FLOW_COOKIE = 'gantry_sso';
const FLOW_TTL_SEC = 10 * 60;
const FLOW_CONTEXT = 'idp:sso-flow';

interface Flow {
  idpId: string;
  verifier: string;
  state: string;
  nonce: string;
  returnTo: string;
  exp: number;
}

/** A path of ours to continue at: never another origin (an open redirect). */
const localPath = (raw: unknown) =>
  typeof raw === 'string' && raw.startsWith('/') && !raw.startsWith('//') && !raw.includes('\\') ? raw : '/account';

function flowCookie(request: Request): string | null {
  const header = request.headers.cookie as string | undefined;
  for (const part of header?.split(';') ?? []) {
    const [name, ...rest] = part.trim().split('=');
    if (name === FLOW_COOKIE) return rest.join('=');
  }
  return null;
}

/**
 * SSO sign-in through an identity provider (docs/identity-providers.md, Sign-in): the code flow
 * with PKCE, state and nonce by openid-client, the flow kept in a sealed cookie of this browser
 * for ten minutes; the ID token's claims decide the user (sso.ts); the browser is then signed
 * in, or shown the second step when the IdP did not prove a second factor and the user has one.
 */
export function ssoRoutes(app: PluginDeps): ServerRoute[] {
  const { idp, identity } = app.services;
  const { kernel } = app;
  const sso = createSsoSignIn(kernel, { identity, audit: app.services.audit, idp, accounts: app.services.accounts });
  const redirectUri = `${kernel.config.publicUrl}${CALLBACK_PATH}`;
  const refuse = (h: ResponseToolkit, message: string, status = 403) =>
    page(h, messagePage('Single sign-on did not work', message), status).header(
      'Set-Cookie',
      `${FLOW_COOKIE}=; ${kernel.pageForms.attrs(0)}`,
    );

  return [
    {
      method: 'GET',
      path: SSO_START_PATH,
      options: { id: 'idp.sso-start', ...pageRoute('To the identity provider') },
      handler: async (request, h) => {
        const row = typeof request.query.idp === 'string' ? await idp.findRow(request.query.idp) : undefined;
        if (!row) return refuse(h, 'This identity provider is not configured here.', 404);
        let config: oidc.Configuration;
        try {
          config = await idp.providers.configuration(row.id, idp.settingsOf(row));
        } catch {
          return refuse(h, `${row.name} cannot be reached just now. Try again in a moment.`, 400);
        }
        const flow: Flow = {
          idpId: row.id,
          verifier: oidc.randomPKCECodeVerifier(),
          state: oidc.randomState(),
          nonce: oidc.randomNonce(),
          returnTo: localPath(request.query.return_to),
          exp: kernel.clock.now().getTime() + FLOW_TTL_SEC * 1000,
        };
        const url = oidc.buildAuthorizationUrl(config, {
          redirect_uri: redirectUri,
          scope: 'openid email profile',
          code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
          code_challenge_method: 'S256',
          state: flow.state,
          nonce: flow.nonce,
        });
        const sealed = seal(kernel.secrets, JSON.stringify(flow), FLOW_CONTEXT);
        return redirect(h, url.href).header(
          'Set-Cookie',
          `${FLOW_COOKIE}=${sealed}; ${kernel.pageForms.attrs(FLOW_TTL_SEC)}`,
        );
      },
    },
    {
      method: 'GET',
      path: CALLBACK_PATH,
      options: { id: 'idp.sso-callback', ...pageRoute('Signed in through the identity provider, or why not') },
      handler: async (request, h) => {
        const raw = flowCookie(request);
        let flow: Flow | null = null;
        try {
          flow = raw ? (JSON.parse(open(kernel.secrets, raw, FLOW_CONTEXT)) as Flow) : null;
        } catch (err) {
          if (!(err instanceof SealError) && !(err instanceof SyntaxError)) throw err;
        }
        if (!flow || flow.exp < kernel.clock.now().getTime())
          return refuse(h, 'This sign-in was not started in this browser, or took too long. Start again.', 400);
        const row = await idp.findRow(flow.idpId);
        if (!row) return refuse(h, 'This identity provider is no longer configured here.', 404);
        if (typeof request.query.error === 'string')
          return refuse(h, `${row.name} did not sign you in (${String(request.query.error).slice(0, 100)}).`);
        let claims: oidc.IDToken | undefined;
        try {
          const config = await idp.providers.configuration(row.id, idp.settingsOf(row));
          const current = new URL(`${redirectUri}${request.url.search}`);
          const tokens = await oidc.authorizationCodeGrant(config, current, {
            pkceCodeVerifier: flow.verifier,
            expectedState: flow.state,
            expectedNonce: flow.nonce,
            idTokenExpected: true,
          });
          claims = tokens.claims();
        } catch (err) {
          kernel.logger.warn('sso callback refused', { idpId: row.id, reason: (err as Error).message });
          return refuse(h, `The answer of ${row.name} could not be accepted. Start again.`, 400);
        }
        if (!claims) return refuse(h, `${row.name} sent no ID token.`, 400);
        const outcome = await sso.resolve(row, claims);
        if ('refused' in outcome) return refuse(h, outcome.refused);
        const clearFlow = `${FLOW_COOKIE}=; ${kernel.pageForms.attrs(0)}`;
        // Without a second factor from the IdP, the account center's rules: its second step first.
        // Either way the session is recorded as this IdP's, so `idp remove` ends it (Removal).
        if (!outcome.factorVerified && (await identity.factors.state(outcome.userId)).twoStep) {
          const pre = kernel.pageForms.preSession(request);
          const res = await continueSignIn(app, request, h, outcome.userId, flow.returnTo, pre.value, row.id);
          if (pre.setCookie) res.header('Set-Cookie', pre.setCookie, { append: true });
          return res.header('Set-Cookie', clearFlow, { append: true });
        }
        const res = await signInBrowser(app, request, h, outcome.userId, flow.returnTo, outcome.factorVerified, row.id);
        return res.header('Set-Cookie', clearFlow, { append: true });
      },
    },
  ];
}
