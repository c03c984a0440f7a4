import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { PluginDeps } from '../services.js';
import { clientDeviceOf } from '../http/client-address.js';
import { escapeHtml as escape } from '../http/html.js';
import { formField, messagePage, page, redirect } from '../http/page-forms.js';
import type { PageView } from '../http/page-kit.js';
import { sha256Hex } from '../lib/crypto.js';
import { BROWSER_SESSION_COOKIE, BROWSER_SESSION_TTL_SEC } from './browser-sessions.js';
import { credential as credentialSchema } from './factor-schemas.js';

/**
 * What every domain's sign-in pages share about second factors (docs/identity.md, Pages): the
 * second step after a right password or sign-in link, "Sign in with a passkey", and the passkey
 * scripts with the CSP they need. The routes these forms post to are factor-pages.ts.
 */
export const SECOND_STEP_PATH = '/auth/two-step';
export const PASSKEY_SIGN_IN_PATH = '/auth/passkey';
/** The CSRF purposes of those forms (bound to the pre-session cookie: nobody is signed in yet). */
export const SECOND_STEP_CSRF = 'two-step';
export const PASSKEY_SIGN_IN_CSRF = 'passkey-signin';

/**
 * A place on this server to continue to after a sign-in: a path, never another origin (an open
 * redirect), nor `//host` or a backslash a browser would read as one.
 */
export function localPath(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  if (!value.startsWith('/') || value.startsWith('//') || /[\\\s\p{Cc}]/u.test(value)) return null;
  return value;
}

/** A form's `credential` field: a WebAuthn answer as the passkey script put it there, or null. */
export function credentialField<T = AuthenticationResponseJSON>(body: Record<string, unknown>): T | null {
  const raw = formField(body, 'credential');
  if (!raw) return null;
  try {
    const { value, error } = credentialSchema.validate(JSON.parse(raw));
    return error ? null : (value as T);
  } catch {
    return null;
  }
}

const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escape(value)}">`;

/** Passkey buttons need the two script files and a CSP that lets them run; nothing on an IP-address origin. */
function passkeyPage(app: PluginDeps): { head: string; scripts: true } | null {
  const { identity } = app.services;
  return identity.passkeys.support.available ? { head: identity.passkeyAssets().head, scripts: true } : null;
}

/** Answers a page view, with the passkey scripts when it shows a passkey button. */
export function pageWithPasskeys(
  app: PluginDeps,
  h: ResponseToolkit,
  view: PageView,
  status = 200,
  withPasskeys = true,
): ResponseObject {
  const extras = withPasskeys ? passkeyPage(app) : null;
  if (!extras) return page(h, view, status);
  return page(h, { ...view, head: [view.head, extras.head].filter(Boolean).join('\n') }, status, { scripts: true });
}

/** The message the script shows when a passkey ceremony fails (filled in by it; hidden until then). */
const passkeyStatus = '<p class="error" role="alert" data-passkey-status hidden></p>';

/** "Sign in with a passkey" under a sign-in form: a form of its own, shown only when the browser can use one. */
export function passkeySignInForm(app: PluginDeps, csrf: string, returnTo: string): string {
  if (!app.services.identity.passkeys.support.available) return '';
  return `<div data-passkey-offer hidden>
<p class="divider">or</p>
<form method="post" action="${PASSKEY_SIGN_IN_PATH}" data-passkey-options="${PASSKEY_SIGN_IN_PATH}/options">
${hidden('csrf', csrf)}
${hidden('return_to', returnTo)}
${hidden('credential', '')}
${passkeyStatus}
<div class="actions"><button class="btn btn-secondary" type="button" data-passkey="authenticate">Sign in with a passkey</button></div>
</form>
</div>`;
}

export interface SecondStepView {
  mfaToken: string;
  methods: readonly string[];
  csrf: string;
  error?: string;
}

/** The second step of a sign-in: a code from the app or a recovery code, or one of the user's passkeys. */
export function secondStepView(v: SecondStepView): PageView {
  const passkey = v.methods.includes('passkey');
  return {
    title: 'Two-step sign-in',
    body: `<h1>Two-step sign-in</h1>
${v.error ? `<p class="error" role="alert">${escape(v.error)}</p>\n` : ''}<p>Enter the 6-digit code from your authenticator app.</p>
<form method="post" action="${SECOND_STEP_PATH}"${passkey ? ` data-passkey-options="${SECOND_STEP_PATH}/passkey-options"` : ''}>
${hidden('csrf', v.csrf)}
${hidden('mfa_token', v.mfaToken)}
${hidden('credential', '')}
<label for="code">Code</label>
<input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" aria-describedby="code-help"${v.error ? ' aria-invalid="true"' : ''}>
<p class="muted" id="code-help">Lost your device? Enter one of your recovery codes instead (like abcd-efgh-jkmn); each works once.</p>
<div class="actions"><button class="btn btn-primary" type="submit">Continue</button></div>
${
  passkey
    ? `<div data-passkey-offer hidden>
<p class="divider">or</p>
${passkeyStatus}
<div class="actions"><button class="btn btn-secondary" type="button" data-passkey="authenticate">Use a passkey</button></div>
</div>`
    : ''
}
</form>`,
  };
}

/**
 * Signs the browser in and goes on to `returnTo`. `idpId`: the identity provider the sign-in
 * came through (SSO, or its second step), recorded with the session so that removing the IdP
 * ends it at once (docs/identity-providers.md, Removal); an IdP removed meanwhile signs nobody in.
 */
export async function signInBrowser(
  app: PluginDeps,
  request: Request,
  h: ResponseToolkit,
  userId: string,
  returnTo: string,
  factorVerified: boolean,
  idpId: string | null = null,
): Promise<ResponseObject> {
  if (idpId && !(await app.services.idp.findRow(idpId)))
    return page(
      h,
      messagePage('Single sign-on did not work', 'This identity provider is no longer configured here.'),
      403,
    );
  const value = await app.services.identity.browserSessions.start(userId, {
    ...clientDeviceOf(request),
    factorVerified,
  });
  if (idpId) {
    const signedIn = await app.services.identity.browserSessions.signInOf(value);
    if (signedIn) await app.services.idp.recordIssuedNow(idpId, 'session', signedIn.sessionId);
  }
  return redirect(h, returnTo, 303).header(
    'Set-Cookie',
    `${BROWSER_SESSION_COOKIE}=${value}; ${app.kernel.pageForms.attrs(BROWSER_SESSION_TTL_SEC)}`,
  );
}

/**
 * After a right password, sign-in link or SSO sign-in on any page: with two-step sign-in on,
 * the second step's page, whose token only this browser (its pre-session cookie) can complete;
 * otherwise the browser is signed in and goes on to `returnTo`. `idpId` as for signInBrowser.
 */
export async function continueSignIn(
  app: PluginDeps,
  request: Request,
  h: ResponseToolkit,
  userId: string,
  returnTo: string,
  preSession: string,
  idpId: string | null = null,
): Promise<ResponseObject> {
  const step = await app.services.identity.pageSecondStep(userId, returnTo, sha256Hex(preSession), idpId);
  if (!step) return signInBrowser(app, request, h, userId, returnTo, false, idpId);
  const csrf = app.kernel.pageForms.csrfFor(preSession, SECOND_STEP_CSRF);
  return pageWithPasskeys(
    app,
    h,
    secondStepView({ mfaToken: step.mfaToken, methods: step.methods, csrf }),
    200,
    step.methods.includes('passkey'),
  );
}

/**
 * The fields a decision form adds when its user must prove a second factor first (docs/identity.md,
 * Step-up): a code field when they have two-step sign-in, and the `credential` field the
 * passkey buttons fill. The form posts the code (or the passkey) with its decision.
 */
export function stepUpFields(methods: readonly string[], error?: string): string {
  const code = methods.includes('totp');
  const help = code
    ? 'Confirm it is you first: enter the code from your authenticator app, or a recovery code.'
    : 'Confirm it is you first, with one of your passkeys.';
  return `<div class="step-up">
${error ? `<p class="error" role="alert">${escape(error)}</p>\n` : ''}<p id="step-up-help">${help}</p>
${code ? `<label for="code">Code</label>\n<input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" aria-describedby="step-up-help"${error ? ' aria-invalid="true"' : ''}>\n` : ''}${hidden('credential', '')}
</div>`;
}

/** Buttons that do the form's act with a passkey (each submits its own name and value), shown where the browser can. */
export function passkeyChoices(buttons: ReadonlyArray<{ name: string; value: string; text: string }>): string {
  return `<div data-passkey-offer hidden>
<p class="divider">or</p>
${passkeyStatus}
<div class="actions">${buttons
    .map(
      (b) =>
        `<button class="btn btn-secondary" type="button" data-passkey="authenticate" name="${escape(b.name)}" value="${escape(b.value)}">${escape(b.text)}</button>`,
    )
    .join('')}</div>
</div>`;
}
