import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ProviderError, type OutboundOptions, type ProviderName } from './types.js';

/** Largest provider response body read; a bigger one is a malformed answer. */
export const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

/** Loopback, private, link-local, CGNAT, multicast and unspecified ranges (RFC 1918, 6598, 4193, 4291). */
function privateRanges(): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
    ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3],
  ] as const) list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) list.addSubnet(net, prefix, 'ipv6');
  return list;
}

export function isPrivateAddress(address: string, ranges: BlockList = privateRanges()): boolean {
  const family = isIP(address);
  if (family === 4) return ranges.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return ranges.check(mapped[1], 'ipv4');
    return ranges.check(address, 'ipv6');
  }
  return true;
}

/**
 * Refuses a URL whose host is, or resolves to, a loopback or private address. The check runs
 * before fetch resolves the name again, so a DNS answer that changes in between is not caught
 * (docs/ai.md); redirects are never followed, so a public host cannot bounce the call inward.
 */
async function assertPublic(provider: ProviderName, url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const ranges = privateRanges();
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (addresses.length === 0) throw new ProviderError(provider, 'network', `cannot resolve ${host}`);
  if (addresses.some((a) => isPrivateAddress(a, ranges))) {
    throw new ProviderError(provider, 'blocked', `${host} is a loopback or private address; set GANTRY_ALLOW_PRIVATE_NETWORKS=true to allow it`);
  }
}

async function readCapped(provider: ProviderName, response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_RESPONSE_BYTES) throw new ProviderError(provider, 'malformed', `response larger than ${MAX_RESPONSE_BYTES} bytes`, response.status);
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new ProviderError(provider, 'malformed', `response larger than ${MAX_RESPONSE_BYTES} bytes`, response.status);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function classifyStatus(provider: ProviderName, status: number, body: string): ProviderError {
  const detail = body.slice(0, 200).replace(/\s+/g, ' ');
  const message = `HTTP ${status}${detail ? `: ${detail}` : ''}`;
  if (status === 429) return new ProviderError(provider, 'rate_limited', message, status);
  if (status >= 500) return new ProviderError(provider, 'server', message, status);
  if (status === 401 || status === 403) return new ProviderError(provider, 'auth', `HTTP ${status}: the API key was refused`, status);
  if (status >= 300 && status < 400) return new ProviderError(provider, 'malformed', `HTTP ${status}: redirects are not followed`, status);
  return new ProviderError(provider, 'refused', message, status);
}

/**
 * One JSON call to a provider: address check, timeout (the caller's signal plus our own),
 * size cap, status classification. Returns the parsed body of a 2xx answer.
 */
export async function callJson(
  provider: ProviderName,
  url: URL,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: unknown },
  options: OutboundOptions,
  signal: AbortSignal,
): Promise<unknown> {
  if (!options.allowPrivateNetworks) await assertPublic(provider, url);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const combined = AbortSignal.any([signal, timeout]);
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: init.method,
      headers: { accept: 'application/json', ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      redirect: 'manual',
      signal: combined,
    });
    text = await readCapped(provider, response);
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    if (timeout.aborted) throw new ProviderError(provider, 'timeout', `no answer within ${options.timeoutMs} ms`);
    if (signal.aborted) throw new ProviderError(provider, 'timeout', 'the call was cancelled');
    throw new ProviderError(provider, 'network', `network error: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
  }
  if (response.status < 200 || response.status >= 300) throw classifyStatus(provider, response.status, text);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderError(provider, 'malformed', 'the response body is not JSON', response.status);
  }
}

/** The provider's base URL with a trailing version segment removed (adapters add their own). */
export function endpoint(baseUrl: string, path: string, versionSegment: string): URL {
  const base = baseUrl.replace(/\/+$/, '').replace(new RegExp(`/${versionSegment}$`), '');
  return new URL(`${base}${path}`);
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
