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

function parse(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

const isLoopbackHttp = (url: URL) => url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);

/**
 * A redirect URI a client may register: absolute, no fragment (RFC 6749 3.1.2), https unless
 * the host is loopback (RFC 8252 7.3; RFC 9700 2.1: no open redirectors, so no wildcards).
 * Self-registered clients may also use a native app's private-use scheme (RFC 8252 7.1,
 * `cursor://...`, `com.example.app:/cb`); browser schemes are refused (docs/oauth.md,
 * Self-registered clients).
 */
export function redirectUriProblem(raw: string, options: { privateUseSchemes?: boolean } = {}): string | null {
  const url = parse(raw);
  if (!url) return `"${raw}" is not an absolute URL`;
  if (url.hash || raw.includes('#')) return `"${raw}" must not carry a fragment`;
  if (url.username || url.password) return `"${raw}" must not carry credentials`;
  if (url.protocol === 'https:') return null;
  if (isLoopbackHttp(url)) return null;
  if (url.protocol === 'http:') return `"${raw}" must use https (plain http is allowed only for loopback hosts)`;
  if (options.privateUseSchemes && !BROWSER_SCHEMES.has(url.protocol) && /^[a-z][a-z0-9+.-]*:$/.test(url.protocol))
    return null;
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
