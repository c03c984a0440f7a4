import { escapeHtml as escape } from '../http/html.js';
import type { PageView } from '../http/page-kit.js';
import { FORGOT_PASSWORD_PAGE } from './page-paths.js';
import { deviceName, when } from './page-text.js';
import type { PasskeySupport, PasskeyView } from './passkeys.js';
import type { UserRow } from './store.js';

/** The account center's HTML (docs/identity.md, Account center); account-pages.ts answers with it. */
export const A = '/account';

export interface AccountCenterView {
  user: UserRow;
  csrf: string;
  notice?: string;
  error?: string;
  /** The `<details>` to show open (the form an error is about). */
  open?: string;
  twoStep: { on: boolean; since: string | null; recoveryCodesLeft: number };
  passkeys: PasskeyView[];
  passkeySupport: PasskeySupport;
  sessions: Array<{
    id: string;
    current: boolean;
    createdAt: string;
    lastUsedAt: string;
    userAgent: string | null;
    ip: string | null;
  }>;
  apps: Array<{ clientId: string; clientName: string; scopes: string[]; grantedAt: string }>;
  scopeWords: Readonly<Record<string, string>>;
}

const csrfField = (csrf: string) => `<input type="hidden" name="csrf" value="${escape(csrf)}">`;
const alerts = (v: { error?: string; notice?: string }) =>
  `${v.error ? `<p class="error" role="alert">${escape(v.error)}</p>\n` : ''}${v.notice ? `<p class="notice" role="status">${escape(v.notice)}</p>\n` : ''}`;
const section = (id: string, title: string, body: string) =>
  `<section class="account-section" aria-labelledby="${id}-h">\n<h2 id="${id}-h">${escape(title)}</h2>\n${body}\n</section>`;
const disclosure = (v: AccountCenterView, id: string, summary: string, form: string) =>
  `<details class="account-form" id="${id}"${v.open === id ? ' open' : ''}><summary>${escape(summary)}</summary>\n${form}\n</details>`;
/** A form of one button (end, remove, revoke), its purpose spelled out for screen readers. */
const buttonForm = (action: string, csrf: string, text: string, label: string, extra = '') =>
  `<form class="inline-form" method="post" action="${escape(action)}">${csrfField(csrf)}${extra}<button class="btn btn-secondary btn-small" type="submit" aria-label="${escape(label)}">${escape(text)}</button></form>`;

function profile(v: AccountCenterView): string {
  const u = v.user;
  const details = `<dl class="details">
<dt>Name</dt><dd>${u.full_name ? escape(u.full_name) : '<span class="muted">not set</span>'}</dd>
<dt>Email</dt><dd>${escape(u.email)}${u.email_verified_at ? '' : ' <span class="muted">(not confirmed yet)</span>'}</dd>
${u.username ? `<dt>Username</dt><dd>${escape(u.username)}</dd>` : ''}
</dl>`;
  const name = disclosure(
    v,
    'name',
    'Change your name',
    `<form method="post" action="${A}/name">${csrfField(v.csrf)}
<label for="full_name">Name</label>
<input id="full_name" name="full_name" type="text" autocomplete="name" maxlength="180" required value="${escape(u.full_name ?? '')}">
<div class="actions"><button class="btn btn-primary" type="submit">Save name</button></div></form>`,
  );
  const email = u.password_hash
    ? disclosure(
        v,
        'email',
        'Change your email',
        `<form method="post" action="${A}/email">${csrfField(v.csrf)}
<label for="new_email">New email</label>
<input id="new_email" name="new_email" type="email" autocomplete="email" required>
<label for="email_password">Your password</label>
<input id="email_password" name="password" type="password" autocomplete="current-password" required>
<p class="muted">We mail a link to the new address; the change happens when it is opened.</p>
<div class="actions"><button class="btn btn-primary" type="submit">Send the confirmation link</button></div></form>`,
      )
    : '';
  return section('profile', 'Profile', `${details}\n${name}\n${email}`);
}

function password(v: AccountCenterView): string {
  if (!v.user.password_hash)
    return section(
      'password',
      'Password',
      `<p>You sign in without a password (with a sign-in link or a passkey). <a href="${FORGOT_PASSWORD_PAGE}">Set a password</a></p>`,
    );
  return section(
    'password',
    'Password',
    disclosure(
      v,
      'password',
      'Change your password',
      `<form method="post" action="${A}/password">${csrfField(v.csrf)}
<label for="current_password">Current password</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password" required>
<label for="new_password">New password (8 or more characters)</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="8" maxlength="128" required>
<p class="muted">Your other sessions are signed out, and connected apps have to ask again.</p>
<div class="actions"><button class="btn btn-primary" type="submit">Change password</button></div></form>`,
    ),
  );
}

function passkeys(v: AccountCenterView): string {
  const intro =
    '<p class="muted">A passkey signs you in with your device’s screen lock or a security key, without a password. It also confirms approvals.</p>';
  const list =
    v.passkeys.length === 0
      ? '<p>No passkeys yet.</p>'
      : `<ul class="account-list">\n${v.passkeys
          .map(
            (p) =>
              `<li><div class="item"><strong>${escape(p.name)}</strong><br><span class="muted">Added ${when(p.createdAt)} · last used ${when(p.lastUsedAt, 'not yet')} · ${p.synced ? 'synced' : 'on one device'}</span></div>${buttonForm(`${A}/passkeys/${p.id}/remove`, v.csrf, 'Remove', `Remove passkey ${p.name}`)}</li>`,
          )
          .join('\n')}\n</ul>`;
  const add = v.passkeySupport.available
    ? `<form method="post" action="${A}/passkeys" data-passkey-options="${A}/passkeys/options">${csrfField(v.csrf)}
<input type="hidden" name="credential" value="">
<div data-passkey-offer hidden>
<label for="passkey_name">Name of the new passkey (optional)</label>
<input id="passkey_name" name="name" type="text" maxlength="60">
<p class="error" role="alert" data-passkey-status hidden></p>
<div class="actions"><button class="btn btn-primary" type="button" data-passkey="register">Add a passkey</button></div>
</div>
<p class="muted" data-passkey-unsupported hidden>This browser cannot use passkeys.</p>
<noscript><p class="muted">Adding a passkey needs JavaScript.</p></noscript>
</form>`
    : `<p class="warning" id="passkeys-unavailable">${escape(v.passkeySupport.reason)}</p>`;
  return section('passkeys', 'Passkeys', `${intro}\n${list}\n${add}`);
}

function twoStep(v: AccountCenterView): string {
  if (!v.twoStep.on)
    return section(
      'two-step',
      'Two-step sign-in',
      `<p>Off. When it is on, signing in with your password or a sign-in link also asks for a code from an authenticator app on your phone.</p>
<form method="post" action="${A}/two-step/setup">${csrfField(v.csrf)}<div class="actions"><button class="btn btn-primary" type="submit">Turn on two-step sign-in</button></div></form>`,
    );
  const left = v.twoStep.recoveryCodesLeft;
  return section(
    'two-step',
    'Two-step sign-in',
    `<p><span class="badge">On</span> since ${when(v.twoStep.since)}. ${left} recovery code${left === 1 ? '' : 's'} left.</p>
${disclosure(
  v,
  'recovery-codes',
  'Get new recovery codes',
  `<form method="post" action="${A}/two-step/recovery-codes">${csrfField(v.csrf)}
<label for="recovery_code">Code from your authenticator app</label>
<input id="recovery_code" name="code" type="text" autocomplete="one-time-code" required>
<p class="muted">Your old recovery codes stop working.</p>
<div class="actions"><button class="btn btn-primary" type="submit">Get new codes</button></div></form>`,
)}
${disclosure(
  v,
  'two-step-off',
  'Turn off two-step sign-in',
  `<form method="post" action="${A}/two-step/disable">${csrfField(v.csrf)}
<label for="off_code">Code from your authenticator app, or a recovery code</label>
<input id="off_code" name="code" type="text" autocomplete="one-time-code" required>
<div class="actions"><button class="btn btn-secondary" type="submit">Turn off</button></div></form>`,
)}`,
  );
}

function sessions(v: AccountCenterView): string {
  const items = v.sessions
    .map((s) => {
      const device = deviceName(s.userAgent);
      return `<li><div class="item"><strong>${escape(device)}</strong>${s.current ? ' <span class="badge">This session</span>' : ''}<br><span class="muted">${s.ip ? `${escape(s.ip)} · ` : ''}signed in ${when(s.createdAt)} · last active ${when(s.lastUsedAt)}</span></div>${buttonForm(`${A}/sessions/${s.id}/end`, v.csrf, s.current ? 'Sign out' : 'End', s.current ? 'Sign out of this session' : `End the session of ${device}`)}</li>`;
    })
    .join('\n');
  return section(
    'sessions',
    'Sessions',
    `<p class="muted">Where you are signed in: browsers and apps. Ending a session signs it out at once.</p>\n<ul class="account-list">\n${items}\n</ul>`,
  );
}

function apps(v: AccountCenterView): string {
  if (v.apps.length === 0) return section('apps', 'Connected apps', '<p>No apps can reach your account.</p>');
  const items = v.apps
    .map((a) => {
      const can = a.scopes.map((s) => escape(v.scopeWords[s] ?? s)).join('; ');
      return `<li><div class="item"><strong>${escape(a.clientName)}</strong><br><span class="muted">Allowed ${when(a.grantedAt)}. It can: ${can}.</span></div>${buttonForm(`${A}/apps/revoke`, v.csrf, 'Revoke', `Revoke the access of ${a.clientName}`, `<input type="hidden" name="client_id" value="${escape(a.clientId)}">`)}</li>`;
    })
    .join('\n');
  return section(
    'apps',
    'Connected apps',
    `<p class="muted">Apps you allowed to use your account. Revoking ends their access at once; they have to ask again.</p>\n<ul class="account-list">\n${items}\n</ul>`,
  );
}

export function accountCenterPage(v: AccountCenterView): PageView {
  return {
    title: 'Your account',
    body: `<h1>Your account</h1>
<p class="muted">Signed in as <strong>${escape(v.user.email)}</strong>.</p>
${alerts(v)}${profile(v)}
${password(v)}
${passkeys(v)}
${twoStep(v)}
${sessions(v)}
${apps(v)}
${section('sign-out', 'Sign out', `<form method="post" action="${A}/sign-out">${csrfField(v.csrf)}<div class="actions"><button class="btn btn-secondary" type="submit">Sign out of this browser</button></div></form>`)}`,
  };
}

/** Step two of turning two-step sign-in on: the QR code and key, and the first code. */
export function totpSetupPage(v: { csrf: string; secret: string; qrSvg: string; error?: string }): PageView {
  const key = v.secret.replace(/(.{4})/g, '$1 ').trim();
  const qr = v.qrSvg.replace('<svg ', '<svg role="img" aria-label="QR code to scan with your authenticator app" ');
  return {
    title: 'Turn on two-step sign-in',
    body: `<h1>Turn on two-step sign-in</h1>
${alerts(v)}<p>Scan this code with your authenticator app (any app for time-based codes works).</p>
<div class="qr">${qr}</div>
<p>Or type this key into the app: <code class="secret">${escape(key)}</code></p>
<form method="post" action="${A}/two-step/enable">${csrfField(v.csrf)}
<label for="code">The 6-digit code the app shows</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required${v.error ? ' aria-invalid="true"' : ''}>
<div class="actions"><button class="btn btn-primary" type="submit">Turn on</button><a class="btn btn-secondary" href="${A}">Cancel</a></div></form>`,
  };
}

/** The recovery codes, shown once (after turning two-step sign-in on, or asking for new ones). */
export function recoveryCodesPage(codes: readonly string[], notice: string): PageView {
  return {
    title: 'Your recovery codes',
    body: `<h1>Save your recovery codes</h1>
<p class="notice" role="status">${escape(notice)}</p>
<p>If you lose your phone, each of these codes signs you in once instead of a code from the app. Keep them somewhere safe, such as a password manager. They are shown only now.</p>
<ol class="recovery-codes">
${codes.map((c) => `<li><code>${escape(c)}</code></li>`).join('\n')}
</ol>
<div class="actions"><a class="btn btn-primary" href="${A}">I have saved them</a></div>`,
  };
}
