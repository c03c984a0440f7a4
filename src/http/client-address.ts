import { BlockList, isIP, isIPv4 } from 'node:net';
import type { Request, Server } from '@hapi/hapi';
import type { TrustedProxy } from '../config.js';

/** `::ffff:10.0.0.1` (a dual-stack listener's IPv4 peer) and `10.0.0.1` are one caller. */
function normalize(address: string): string {
  return address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
}

/** One X-Forwarded-For entry as an address; null when it is not one. */
function hop(entry: string): string | null {
  let value = entry.trim();
  // Some proxies write `[v6]:port` or `v4:port`.
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) value = bracketed[1];
  else if (/^[\d.]+:\d+$/.test(value)) value = value.slice(0, value.indexOf(':'));
  return isIP(value) ? normalize(value) : null;
}

/**
 * Who is calling, given the peer and its X-Forwarded-For. A header from an untrusted peer is
 * ignored (anyone can write one). From a trusted peer, the list is walked from the right, past
 * every trusted hop: the first untrusted address is the client (each proxy appends the peer it
 * saw, so only the entries right of it are vouched for); if every hop is trusted, the leftmost.
 */
export function clientAddressFrom(
  peer: string,
  forwardedFor: string | string[] | undefined,
  trusted: (address: string) => boolean,
): string {
  let client = normalize(peer);
  if (!forwardedFor || !trusted(client)) return client;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const address = hop(hops[i]);
    // Malformed from here on: a trusted proxy wrote nothing usable, so its peer is the client.
    if (address === null) return client;
    client = address;
    if (!trusted(address)) return client;
  }
  return client;
}

/** A membership test over GANTRY_TRUSTED_PROXIES (node:net BlockList, IPv4 and IPv6). */
export function trustedProxyTest(proxies: readonly TrustedProxy[]): (address: string) => boolean {
  const list = new BlockList();
  for (const p of proxies) list.addSubnet(p.address, p.prefix, p.family);
  return (address) => list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
}

/**
 * Derives the client address once per request, before anything reads it. Without trusted
 * proxies there is nothing to derive (the peer is the client) and no step is added.
 */
export function registerClientAddress(server: Server, proxies: readonly TrustedProxy[]): void {
  if (proxies.length === 0) return;
  const trusted = trustedProxyTest(proxies);
  server.ext('onRequest', (request, h) => {
    (request.app as { clientAddress?: string }).clientAddress = clientAddressFrom(
      peerOf(request),
      request.headers['x-forwarded-for'] as string | string[] | undefined,
      trusted,
    );
    return h.continue;
  });
}

/**
 * The client's address, as every anonymous rate limit, sign-in budget and log line counts it.
 * Never read request.info.remoteAddress directly: behind a proxy it is the proxy.
 */
export function clientAddressOf(request: Request): string {
  return (request.app as { clientAddress?: string }).clientAddress ?? peerOf(request);
}

/** The TCP peer; hapi reads it on arrival (server option info.remote), so it is there even after a disconnect. */
function peerOf(request: Request): string {
  return normalize(request.info.remoteAddress || 'unknown');
}

/** The device a sign-in comes from, as a session records it to show back to its user (User-Agent, address). */
export function clientDeviceOf(request: Request): { userAgent: string | null; ip: string } {
  const agent = request.headers['user-agent'];
  return { userAgent: typeof agent === 'string' && agent.length > 0 ? agent : null, ip: clientAddressOf(request) };
}
