import assert from 'node:assert/strict';
import type { TestApp } from './app.js';
import { makeAccount, makeUser } from './factories.js';
import {
  AUTHORIZE,
  authorizeQuery,
  basic,
  cookieHeader,
  form,
  FORM_HEADERS,
  hiddenInput,
  makeClient,
  pkcePair,
  REDIRECT,
  signIn,
} from './oauth.js';

const PUBLIC = 'http://127.0.0.1:8080';
export const API_RESOURCE = `${PUBLIC}/api/v1`;
export const MCP_RESOURCE = `${PUBLIC}/api/v1/mcp`;
export const PRM_URL = `${PUBLIC}/.well-known/oauth-protected-resource/api/v1/mcp`;
const TOKEN = '/api/v1/oauth/token';

/** A user who owns an account (with its default workspace) and a client that may ask for tools:call. */
export async function mcpSetup(t: TestApp, clientOverrides: Parameters<typeof makeClient>[1] = {}) {
  const user = await makeUser(t.app);
  const account = await makeAccount(t.app, user.id);
  const client = await makeClient(t, { scopes: ['email:read', 'wallet:read', 'tools:call'], ...clientOverrides });
  return { user, account, client, defaultWorkspace: account.defaultWorkspaceId };
}

export type McpSetup = Awaited<ReturnType<typeof mcpSetup>>;

/** An authorize URL for the MCP resource and scope unless told otherwise (`resource: undefined` leaves it out). */
export function mcpAuthorizeUrl(clientId: string, challenge: string, extra: Record<string, string | undefined> = {}) {
  return authorizeQuery(clientId, challenge, { scope: 'tools:call', resource: MCP_RESOURCE, ...extra });
}

/** Signs in on the page and opens the consent page of `url` with the session. */
export async function openConsent(t: TestApp, url: string, user: { email: string; password: string }) {
  const { cookies } = await signIn(t, url, user.email, user.password);
  const page = await t.inject({ method: 'GET', url, headers: { cookie: cookieHeader(cookies) } });
  return { page, cookies };
}

/** Posts the consent form of `page` with the decision and any extra fields (workspace_id). */
export function submitConsent(
  t: TestApp,
  consent: { page: { payload: string }; cookies: Record<string, string> },
  fields: Record<string, string>,
) {
  return t.inject({
    method: 'POST',
    url: AUTHORIZE,
    headers: { ...FORM_HEADERS, cookie: cookieHeader(consent.cookies) },
    payload: form({
      csrf: hiddenInput(consent.page.payload, 'csrf')!,
      request_state: hiddenInput(consent.page.payload, 'request_state')!,
      ...fields,
    }),
  });
}

export async function postToken(t: TestApp, payload: Record<string, string>, auth?: string) {
  const res = await t.inject({
    method: 'POST',
    url: TOKEN,
    headers: { ...FORM_HEADERS, ...(auth ? { authorization: auth } : {}) },
    payload: form(payload),
  });
  return Object.assign(res, { json: () => JSON.parse(res.payload) });
}

/** Authorize (MCP resource and scope by default), allow with the default workspace, and the code. */
export async function mcpCode(
  t: TestApp,
  setup: McpSetup,
  options: { query?: Record<string, string | undefined>; workspaceId?: string } = {},
) {
  const { verifier, challenge } = pkcePair();
  const consent = await openConsent(t, mcpAuthorizeUrl(setup.client.clientId, challenge, options.query), setup.user);
  assert.equal(consent.page.statusCode, 200, consent.page.payload);
  const res = await submitConsent(t, consent, {
    decision: 'allow',
    workspace_id: options.workspaceId ?? setup.defaultWorkspace,
  });
  assert.equal(res.statusCode, 303, res.payload);
  const location = new URL(res.headers.location as string);
  return { code: location.searchParams.get('code')!, verifier, location };
}

/** The whole dance up to the token response (asserted 200). */
export async function mcpTokens(
  t: TestApp,
  setup: McpSetup,
  options: { query?: Record<string, string | undefined>; workspaceId?: string; tokenResource?: string } = {},
) {
  const { code, verifier } = await mcpCode(t, setup, options);
  const res = await postToken(
    t,
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      ...(options.tokenResource ? { resource: options.tokenResource } : {}),
    },
    basic(setup.client.clientId, setup.client.clientSecret!),
  );
  assert.equal(res.statusCode, 200, res.payload);
  return res.json() as { access_token: string; refresh_token: string; scope: string };
}
