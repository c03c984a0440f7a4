import type { TestApp } from './app.js';
import { cookieHeader, cookiesFrom, FORM_HEADERS, form, hiddenInput } from './oauth.js';

/**
 * A browser on the invitation page (docs/accounts.md, Invitation: the page), played with
 * inject: a cookie jar per browser, the page opened before each form is posted (its CSRF value
 * is bound to the browser's cookie), one client address per browser.
 */
export function invitationBrowser(t: TestApp, token: string, remoteAddress = '10.77.0.1') {
  const cookies: Record<string, string> = {};
  const url = `/invitations/accept?token=${encodeURIComponent(token)}`;
  const keep = (res: Awaited<ReturnType<TestApp['inject']>>) => {
    Object.assign(cookies, cookiesFrom(res.headers['set-cookie'] as string[] | string | undefined));
    return res;
  };
  const open = async () =>
    keep(await t.inject({ method: 'GET', url, remoteAddress, headers: { cookie: cookieHeader(cookies) } }));
  const post = async (fields: Record<string, string>) =>
    keep(
      await t.inject({
        method: 'POST',
        url,
        remoteAddress,
        headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
        payload: form(fields),
      }),
    );
  /** Opens the page, then posts its form of this action with the CSRF value it carries. */
  const submit = async (action: 'signin' | 'register' | 'accept', fields: Record<string, string> = {}) => {
    const page = await open();
    return post({ action, csrf: hiddenInput(page.payload, 'csrf') ?? '', ...fields });
  };
  return {
    url,
    cookies,
    open,
    post,
    signIn: (email: string, password: string) => submit('signin', { email, password }),
    register: (password: string, fullName = '') => submit('register', { password, full_name: fullName }),
    accept: () => submit('accept'),
  };
}
