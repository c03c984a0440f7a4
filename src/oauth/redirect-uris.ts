const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Schemes a browser handles itself (or that could run content): never a native app's private-use
 * scheme (RFC 8252 7.1), so never a redirect target even for a self-registered client.
 */
const BROWSER_SCHEMES = new Set([
  'about:',
  'blob:',
  'chrome:',
  'data:',
  'file:',
  'filesystem:',
  'ftp:',
  'intent:',
  'javascript:',
  'mailto:',
  'sms:',
  'tel:',
  'vbscript:',
  'view-source:',
  'ws:',
  'wss:',
]);

/**
 * Schemes that hand their URL to a browser or to the system (docs/oauth.md, Self-registered
 * clients): `microsoft-edge:https://evil.example/cb` opens evil.example in Edge, and iOS does the
 * same for `x-safari-https:` and `googlechromes:`, so a code sent there lands on a web page of the
 * client's choosing. Never a redirect target, whatever the client says it is. The families are
 * the browsers' and Windows' own launchers (`ms-settings:`, `search-ms:`), browser extensions
 * (`chrome-extension:`, `moz-extension:`), and lookalikes of http(s) (`https.evil:`).
 */
const LAUNCHER_SCHEMES = [
  /^microsoft-edge/,
  /^x-safari-/,
  /^googlechrome/,
  /^(firefox|opera|brave|vivaldi|chromium|safari)([-+.]|$)/,
  /-extension$/,
  /^ms-/,
  /^search-ms$/,
  /^http(?!s?$)/,
];

/** OpenID Connect Dynamic Client Registration 1.0, 2: `web` (the default) or `native`. */
export type ApplicationType = 'web' | 'native';

function parse(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

const isLoopbackHttp = (url: URL) => url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);

/** A scheme no redirect may use: a browser's own (BROWSER_SCHEMES) or one that launches a browser. */
function refusedScheme(protocol: string): boolean {
  const scheme = protocol.slice(0, -1);
  return BROWSER_SCHEMES.has(protocol) || LAUNCHER_SCHEMES.some((family) => family.test(scheme));
}

/** Whether a redirect URI's scheme is one no client may be sent to (checked again at authorize, for older rows). */
export function opensBrowser(raw: string): boolean {
  const url = parse(raw);
  return url !== null && refusedScheme(url.protocol);
}

/**
 * A redirect URI a client may register: absolute, no fragment (RFC 6749 3.1.2), https unless
 * the host is loopback (RFC 8252 7.3; RFC 9700 2.1: no open redirectors, so no wildcards).
 * A self-registered client of application_type `native` may also use its own private-use
 * scheme (RFC 8252 7.1, `cursor://...`, `com.example.app:/cb`), never one a browser handles or
 * that launches one; a `web` client (the default) is a browser's, so https or loopback only
 * (docs/oauth.md, Self-registered clients). Operator-created clients pass no type: https or loopback.
 */
export function redirectUriProblem(raw: string, applicationType?: ApplicationType): string | null {
  const url = parse(raw);
  if (!url) return `"${raw}" is not an absolute URL`;
  if (url.hash || raw.includes('#')) return `"${raw}" must not carry a fragment`;
  if (url.username || url.password) return `"${raw}" must not carry credentials`;
  if (url.protocol === 'https:') return null;
  if (isLoopbackHttp(url)) return null;
  if (url.protocol === 'http:') return `"${raw}" must use https (plain http is allowed only for loopback hosts)`;
  if (applicationType === 'native') {
    if (!refusedScheme(url.protocol) && /^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) return null;
    return `"${raw}" uses a scheme that a browser or the system handles, not a native app's own`;
  }
  if (applicationType === 'web')
    return `"${raw}" must be an https URL (a native app's own scheme needs application_type native)`;
  return `"${raw}" must be an https URL`;
}

/**
 * Whether a presented redirect_uri is one of the client's: exact string match, except that a
 * public client's loopback URI matches on any port (RFC 8252 7.3: a native app listens on
 * whatever port it gets), with the same host, path and query.
 */
export function redirectUriMatches(
  registered: readonly string[],
  presented: string,
  anyLoopbackPort: boolean,
): boolean {
  if (registered.includes(presented)) return true;
  if (!anyLoopbackPort || presented.includes('#')) return false;
  const url = parse(presented);
  if (!url || !isLoopbackHttp(url) || url.username || url.password) return false;
  return registered.some((candidate) => {
    const known = parse(candidate);
    if (!known || !isLoopbackHttp(known) || known.hostname !== url.hostname) return false;
    return known.pathname === url.pathname && known.search === url.search;
  });
}

/** What the consent page names as where the user is sent: scheme and host (the scheme alone for `app:/path`). */
export function redirectHostOf(redirectUri: string): string {
  const url = parse(redirectUri);
  if (!url) return redirectUri;
  if (url.protocol === 'https:') return url.host;
  return url.host ? `${url.protocol}//${url.host}` : url.protocol;
}
