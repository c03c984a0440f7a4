/** The scopes a client may hold (docs/interface.md, Authentication 7), with the words the consent page shows. */
export const SCOPES = {
  'email:read': 'See your email address and whether it is confirmed',
  'profile:read': 'See your name and username',
  'execution:run': 'Run AI executions on your behalf (they are charged to your wallet)',
  'wallet:read': 'See your wallet balance',
  // The MCP endpoint's scope (docs/oauth.md, MCP): granted for one workspace chosen on the consent page.
  'tools:call': 'List and call the tools of one workspace you choose (through MCP), using the accounts connected there',
} as const;

/** The scopes of the MCP resource: what its protected resource metadata lists and its endpoint needs. */
export const MCP_SCOPE = 'tools:call' satisfies Scope;

export type Scope = keyof typeof SCOPES;
export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];

export const isScope = (value: string): value is Scope => Object.prototype.hasOwnProperty.call(SCOPES, value);

/** Space-separated scope string -> unique list (RFC 6749 3.3); null when it is empty or malformed. */
export function parseScope(raw: string | undefined | null): string[] | null {
  if (raw === undefined || raw === null) return null;
  const parts = raw.split(' ').filter((p) => p !== '');
  if (parts.length === 0) return null;
  // scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
  if (parts.some((p) => !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(p))) return null;
  return [...new Set(parts)];
}

/** Canonical order, so equal sets compare and print the same. */
export const formatScope = (scopes: readonly string[]): string =>
  [...new Set(scopes)].sort((a, b) => SCOPE_NAMES.indexOf(a as Scope) - SCOPE_NAMES.indexOf(b as Scope)).join(' ');

export const isSubset = (inner: readonly string[], outer: readonly string[]): boolean =>
  inner.every((s) => outer.includes(s));
