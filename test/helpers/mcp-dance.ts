import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationFull,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * The OAuth client side of an MCP client as the SDKs expect it from an application: storage in
 * memory, and `redirectToAuthorization` keeping the URL for the test to open (it plays the
 * browser). One class serves both SDK eras: their provider interfaces agree on these members.
 */
export class DanceProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  client: OAuthClientInformationFull | undefined;
  saved: OAuthTokens | undefined;
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;
  constructor(
    readonly redirectUrl: string,
    readonly clientMetadata: OAuthClientMetadata,
    readonly clientMetadataUrl?: string,
  ) {}
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationFull) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  // Kept across the redirect like the verifier: the 2.x SDK checks the code's issuer against it.
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  /** What the SDK drops when the server says they are no longer valid (a revoked grant: the tokens). */
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
}

/** Every request the SDK makes, with the form body of token requests (to see `resource` sent). */
export function recordingFetch() {
  const seen: Array<{ method: string; url: string; status: number; form?: URLSearchParams }> = [];
  const fetchFn = async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const res = await fetch(input, init);
    const form = init?.body instanceof URLSearchParams ? init.body : undefined;
    seen.push({ method: init?.method ?? 'GET', url, status: res.status, form });
    return res;
  };
  return { seen, fetchFn };
}

const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&amp;/g, '&');

/** A page as the browser got it: where it is and its HTML. */
interface Page {
  url: string;
  html: string;
}

/**
 * A browser for Gantry's server-rendered pages, played with fetch: a cookie jar, pages opened
 * without following redirects, forms posted with their hidden inputs as a browser sends them.
 */
class Browser {
  private readonly cookies = new Map<string, string>();
  private take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res;
  }
  private get cookie() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  /** GET, expecting `status`. */
  async open(url: URL | string, status = 200): Promise<Page> {
    const res = this.take(await fetch(url, { redirect: 'manual', headers: { cookie: this.cookie } }));
    const html = await res.text();
    assert.equal(res.status, status, `${url}: ${res.status} ${html}`);
    return { url: String(url), html };
  }
  /** Posts the page's form (its hidden inputs and `fields`); expects a 303 and returns where it sends. */
  async submit(page: Page, fields: Record<string, string>): Promise<URL> {
    const form = /<form method="post" action="([^"]*)">([\s\S]*?)<\/form>/.exec(page.html)!;
    const action = new URL(unescape(form[1]), page.url);
    const hidden = [...form[2].matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)];
    const body = new URLSearchParams([...hidden.map((m) => [m[1], unescape(m[2])]), ...Object.entries(fields)]);
    const res = this.take(
      await fetch(action, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: this.cookie },
        body,
      }),
    );
    assert.equal(res.status, 303, await res.text());
    return new URL(res.headers.get('location')!, action);
  }
}

/** The workspace choices of a consent page: value and label of every option, and the preselected one. */
function workspaceOptions(html: string) {
  return [...html.matchAll(/<option value="([^"]*)"( selected)?>([^<]*)<\/option>/g)].map((m) => ({
    id: unescape(m[1]),
    name: unescape(m[3]),
    selected: !!m[2],
  }));
}

/**
 * Plays the user's browser on Gantry's pages for an authorization URL the SDK produced: the
 * sign-in form, then the consent form, allowing with the workspace `workspaceName`. Follows only
 * Gantry's own redirects and returns the consent page and the redirect to the client (the code).
 */
export async function playBrowser(
  authorizationUrl: URL,
  user: { email: string; password: string },
  workspaceName: string,
) {
  const browser = new Browser();
  const signIn = await browser.open(authorizationUrl);
  assert.match(signIn.html, /name="password"/);
  const consent = await browser.open(await browser.submit(signIn, { email: user.email, password: user.password }));
  const workspaces = workspaceOptions(consent.html);
  const chosen = workspaces.find((w) => w.name === workspaceName);
  assert.ok(chosen, `no workspace ${workspaceName} among ${JSON.stringify(workspaces)}`);
  const callback = await browser.submit(consent, { decision: 'allow', workspace_id: chosen.id });
  return { consentHtml: consent.html, workspaces, callback };
}

/** An approver opening an approval link in a fresh browser: signs in on the page, then approves. */
export async function approveOnPage(url: string, user: { email: string; password: string }) {
  const browser = new Browser();
  const signIn = await browser.open(url, 401);
  const review = await browser.open(await browser.submit(signIn, { email: user.email, password: user.password }));
  assert.match(review.html, /data-status="pending"/);
  const done = await browser.open(await browser.submit(review, { decision: 'approve' }));
  assert.match(done.html, /data-status="approved"/);
  return review.html;
}

/** A self-signed certificate for 127.0.0.1 (openssl), and its file for NODE_EXTRA_CA_CERTS. */
export function loopbackCertificate() {
  const dir = mkdtempSync(path.join(tmpdir(), 'gantry-cert-'));
  const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8'), certFile: cert, dir };
}

/** What the test needs of an SDK client of either era. */
interface EraClient {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

type FetchFn = typeof fetch;

/**
 * The official SDK of each era with its OAuth: `connect` (which throws UnauthorizedError after
 * asking the provider to redirect, when it has no usable token) and `finish` (the code from the
 * redirect for tokens, on a fresh transport, as an application does after the browser returns).
 */
export function sdkEras() {
  return [
    {
      era: '2025-11-25 (SDK 1.x)',
      sdk: 'Legacy',
      async connect(endpoint: string, provider: DanceProvider, fetchFn: FetchFn): Promise<EraClient> {
        const client = new LegacyClient({ name: 'legacy-dance', version: '1.0.0' });
        await client.connect(new LegacyTransport(new URL(endpoint), { authProvider: provider, fetch: fetchFn }));
        return client as unknown as EraClient;
      },
      async finish(endpoint: string, provider: DanceProvider, fetchFn: FetchFn, callback: URL) {
        const transport = new LegacyTransport(new URL(endpoint), { authProvider: provider, fetch: fetchFn });
        await transport.finishAuth(callback.searchParams.get('code')!);
      },
    },
    {
      era: '2026-07-28 (SDK 2.x)',
      sdk: 'Modern',
      async connect(endpoint: string, provider: DanceProvider, fetchFn: FetchFn): Promise<EraClient> {
        const client = new ModernClient(
          { name: 'modern-dance', version: '2.0.0' },
          { versionNegotiation: { mode: { pin: '2026-07-28' } } },
        );
        await client.connect(
          new ModernTransport(new URL(endpoint), { authProvider: provider as never, fetch: fetchFn }),
        );
        return client as unknown as EraClient;
      },
      async finish(endpoint: string, provider: DanceProvider, fetchFn: FetchFn, callback: URL) {
        // The whole callback: the 2.x SDK checks its iss (RFC 9207) against the discovered issuer.
        const transport = new ModernTransport(new URL(endpoint), { authProvider: provider as never, fetch: fetchFn });
        await transport.finishAuth(callback.searchParams);
      },
    },
  ];
}

/**
 * The REST API of a running Gantry as a member (a session token's headers) of one account,
 * optionally in one of its workspaces; answers the envelope's data, asserting a 2xx.
 */
export function restApi(base: string, accountId: string) {
  return async (
    method: string,
    route: string,
    who: { headers: Record<string, string> },
    options: { body?: object; workspace?: string } = {},
  ) => {
    const res = await fetch(`${base}/api/v1${route}`, {
      method,
      headers: {
        ...who.headers,
        'x-account-id': accountId,
        ...(options.workspace ? { 'x-workspace-id': options.workspace } : {}),
        ...(options.body ? { 'content-type': 'application/json' } : {}),
      },
      body: options.body ? JSON.stringify(options.body) : undefined,
    });
    const json = await res.json();
    assert.ok(res.status < 300, `${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };
}

/** A bare JSON-RPC ping to the MCP endpoint, with a bearer token or none. */
export function mcpPing(endpoint: string, token?: string) {
  return fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
}
