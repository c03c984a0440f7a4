import { isIP } from 'node:net';

/** Raised for configuration a user must fix; the CLI prints its message as one line, exit 1. */
export class ConfigError extends Error {}

/** One GANTRY_TRUSTED_PROXIES entry: an address, or a CIDR network (the prefix is 32/128 for one address). */
export interface TrustedProxy {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

export function parsePort(name: string, raw: string | number): number {
  const text = String(raw).trim();
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) {
    throw new ConfigError(`${name} must be a port number from 0 to 65535 (got "${text}")`);
  }
  return port;
}

export function parsePositive(name: string, raw: string | number): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`${name} must be a positive number (got "${raw}")`);
  return value;
}

export function parseBool(name: string, raw: string | boolean): boolean {
  if (typeof raw === 'boolean') return raw;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off|)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

export function parseUrl(name: string, raw: string): string {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    return url.href.replace(/\/+$/, '');
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL (got "${raw}")`);
  }
}

/** Comma-separated IPv4/IPv6 addresses and CIDR networks (`10.0.0.0/8`, `::1`, `fd00::/8`). */
export function parseTrustedProxies(name: string, raw: string): TrustedProxy[] {
  const out: TrustedProxy[] = [];
  for (const entry of raw.split(',').map((e) => e.trim())) {
    if (entry === '') continue;
    const slash = entry.indexOf('/');
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const version = isIP(address);
    const max = version === 6 ? 128 : 32;
    const prefixText = slash < 0 ? String(max) : entry.slice(slash + 1);
    const prefix = Number(prefixText);
    if (version === 0 || !/^\d{1,3}$/.test(prefixText) || prefix > max) {
      throw new ConfigError(`${name} must list IP addresses or CIDR networks separated by commas (got "${entry}")`);
    }
    out.push(Object.freeze({ address, prefix, family: version === 6 ? 'ipv6' : 'ipv4' }));
  }
  return out;
}

/**
 * Comma-separated host names (`claude.ai`, `*.example.com`: any name under it, not itself), as
 * URLs name them: lower case, an international name in punycode. A URL, a port or a path is
 * refused: the list names hosts, whatever their scheme and port.
 */
export function parseHostList(name: string, raw: string): string[] {
  const out: string[] = [];
  for (const entry of raw.split(/[\s,]+/)) {
    if (entry === '') continue;
    const wildcard = entry.startsWith('*.');
    const host = wildcard ? entry.slice(2) : entry;
    let parsed: URL | null = null;
    try {
      parsed = /[/:@?#*\\]/.test(host.replace(/^\[[0-9a-f:.]+\]$/i, '')) ? null : new URL(`https://${host}`);
    } catch {
      parsed = null;
    }
    if (!parsed || parsed.port || parsed.hostname === '' || (wildcard && parsed.hostname.startsWith('[')))
      throw new ConfigError(
        `${name} must list host names separated by commas, such as claude.ai or *.example.com (got "${entry}")`,
      );
    out.push(wildcard ? `*.${parsed.hostname}` : parsed.hostname);
  }
  return [...new Set(out)];
}

export function parseMinorUnits(name: string, raw: string | number): number {
  const text = String(raw).trim();
  if (!/^\d{1,12}$/.test(text) || Number(text) < 1)
    throw new ConfigError(`${name} must be a positive whole number of minor units, e.g. 500 for 5.00 (got "${text}")`);
  return Number(text);
}

/** Only PostgreSQL URLs: anything else is a mistake better refused at start than at the first query. */
export function parseDatabaseUrl(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('GANTRY_DATABASE_URL must be a postgres:// URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new ConfigError(`GANTRY_DATABASE_URL must be a postgres:// URL (got a ${url.protocol} URL)`);
  return raw;
}
