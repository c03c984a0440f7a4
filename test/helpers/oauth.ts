import { createHash, randomBytes } from 'node:crypto';
import type { TestApp } from './app.js';

export const AUTHORIZE = '/api/v1/oauth/authorize';
export const REDIRECT = 'https://app.example/cb';

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

export async function makeClient(
  t: TestApp,
  overrides: { type?: 'confidential' | 'public'; scopes?: string[]; redirectUris?: string[]; name?: string } = {},
) {
  return t.app.services.oauth.clients.create({
    name: overrides.name ?? 'Acme',
    type: overrides.type ?? 'confidential',
    redirectUris: overrides.redirectUris ?? [REDIRECT],
    scopes: overrides.scopes ?? ['email:read', 'profile:read', 'execution:run', 'wallet:read'],
  });
}

/**
 * A user's approval of the client for the REST API, made through the service: the form of the
 * token request that exchanges its code (authorization_code, with the PKCE verifier).
 */
export async function approvedCodeForm(
  t: TestApp,
  clientId: string,
  userId: string,
  scopes = ['email:read', 'profile:read'],
): Promise<Record<string, string>> {
  const { verifier, challenge } = pkcePair();
  const redirect = await t.app.services.oauth.authorize.approve(userId, {
    clientId,
    redirectUri: REDIRECT,
    scopes,
    state: null,
    codeChallenge: challenge,
    resource: 'api',
  });
  const code = new URL(redirect).searchParams.get('code')!;
  return { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
}

export function authorizeQuery(clientId: string, challenge: string, extra: Record<string, string | undefined> = {}) {
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: 'email:read profile:read',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined || k === 'state') delete params[k];
    else params[k] = v;
  }
  if ('state' in extra && extra.state !== undefined) params.state = extra.state;
  else if (!('state' in extra)) params.state = 'st-123';
  return `${AUTHORIZE}?${new URLSearchParams(params).toString()}`;
}

export const hiddenInput = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]?.replace(/&amp;/g, '&') ?? null;

export function cookiesFrom(setCookie: string | string[] | undefined): Record<string, string> {
  const list = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  const out: Record<string, string> = {};
  for (const c of list) {
    const [pair] = c.split(';');
    const eq = pair.indexOf('=');
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

export const cookieHeader = (cookies: Record<string, string>) =>
  Object.entries(cookies)
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
export const form = (data: Record<string, string>) => new URLSearchParams(data).toString();
export const FORM_HEADERS = { 'content-type': 'application/x-www-form-urlencoded' };

/** Signs in on the real page; returns the cookies (pre-session and session) and the 303 target. */
export async function signIn(t: TestApp, url: string, email: string, password: string) {
  const page = await t.inject({ method: 'GET', url });
  const cookies = cookiesFrom(page.headers['set-cookie'] as string[] | string | undefined);
  const res = await t.inject({
    method: 'POST',
    url: AUTHORIZE,
    headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
    payload: form({
      csrf: hiddenInput(page.payload, 'csrf')!,
      request_state: hiddenInput(page.payload, 'request_state')!,
      email,
      password,
    }),
  });
  Object.assign(cookies, cookiesFrom(res.headers['set-cookie'] as string[] | string | undefined));
  return { res, cookies, page };
}

/** Signs in and allows; returns the redirect URL (with code) and the cookies. */
export async function authorizeAndAllow(t: TestApp, url: string, email: string, password: string) {
  const { cookies } = await signIn(t, url, email, password);
  const consent = await t.inject({ method: 'GET', url, headers: { cookie: cookieHeader(cookies) } });
  if (consent.statusCode === 302) return { location: new URL(consent.headers.location as string), cookies, consent };
  const res = await t.inject({
    method: 'POST',
    url: AUTHORIZE,
    headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
    payload: form({
      csrf: hiddenInput(consent.payload, 'csrf')!,
      request_state: hiddenInput(consent.payload, 'request_state')!,
      decision: 'allow',
    }),
  });
  return { location: new URL(res.headers.location as string), cookies, consent };
}
