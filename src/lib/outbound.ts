import { lookup } from 'node:dns/promises';
import { lookup as lookupCallback, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { DomainError } from '../http/errors.js';

/** Every outbound call Gantry makes (connectors, OAuth providers, AI providers): bounded in time and in size. */
export const OUTBOUND_TIMEOUT_MS = 10_000;
const OUTBOUND_MAX_BYTES = 4 * 1024 * 1024;

/** Raised when a URL points where Gantry must not go (SSRF guard). */
export class BlockedAddressError extends DomainError {
  constructor(message: string) {
    super('VALIDATION_FAILED', message, [{ field: 'url', message }]);
  }
}

/** Built once: every URL check and every DNS answer of every outbound call consults it. */
const INTERNAL_RANGES = ((): BlockList => {
  const list = new BlockList();
  // Loopback, RFC 1918 private, link-local (incl. 169.254.169.254 metadata), CGNAT,
  // "this network", multicast and reserved ranges; IPv6 loopback, ULA, link-local.
  list.addSubnet('0.0.0.0', 8, 'ipv4');
  list.addSubnet('10.0.0.0', 8, 'ipv4');
  list.addSubnet('100.64.0.0', 10, 'ipv4');
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addSubnet('169.254.0.0', 16, 'ipv4');
  list.addSubnet('172.16.0.0', 12, 'ipv4');
  list.addSubnet('192.0.0.0', 24, 'ipv4');
  list.addSubnet('192.168.0.0', 16, 'ipv4');
  list.addSubnet('198.18.0.0', 15, 'ipv4');
  list.addSubnet('224.0.0.0', 3, 'ipv4');
  list.addAddress('::', 'ipv6');
  list.addAddress('::1', 'ipv6');
  list.addSubnet('fc00::', 7, 'ipv6');
  list.addSubnet('fe80::', 10, 'ipv6');
  list.addSubnet('ff00::', 8, 'ipv6');
  // Cloud metadata over IPv6 (AWS fd00:ec2::254 is inside fc00::/7 already).
  // Prefixes whose embedded IPv4 address cannot be checked reliably: the local-use NAT64
  // prefix (RFC 8215; its IPv4 position depends on the network's prefix length, RFC 6052 §2.2)
  // and Teredo (RFC 4380 §4; the client address is obfuscated and relayed through a server).
  list.addSubnet('64:ff9b:1::', 48, 'ipv6');
  list.addSubnet('2001::', 32, 'ipv6');
  return list;
})();

/** The eight 16-bit groups of an IPv6 address that isIP() accepted (zone id dropped). */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  return tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach it: IPv4-compatible
 * ::a.b.c.d and IPv4-mapped ::ffff:a.b.c.d (RFC 4291 §2.5.5), IPv4-translated ::ffff:0:a.b.c.d
 * (RFC 2765 §2.1), NAT64 64:ff9b::/96 (RFC 6052 §2.1) and 6to4 2002::/16 (RFC 3056 §2).
 */
function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return v4(g[6], g[7]);
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6], g[7]);
  if (g[0] === 0x2002) return v4(g[1], g[2]);
  return null;
}

/**
 * True when the address is loopback, private, link-local, metadata or otherwise internal,
 * including an IPv6 address that embeds such an IPv4 address (see embeddedIpv4).
 */
export function isInternalAddress(address: string): boolean {
  const list = INTERNAL_RANGES;
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 0) return true;
  if (family === 4) return list.check(address, 'ipv4');
  const v4 = embeddedIpv4(address);
  if (v4 !== null && list.check(v4, 'ipv4')) return true;
  return list.check(address.replace(/%.*$/, ''), 'ipv6');
}

/**
 * Refuses a URL that is not http(s) or whose host resolves to an internal address, unless
 * GANTRY_ALLOW_PRIVATE_NETWORKS is set. Checked at save time and again before every call
 * (a DNS answer can change between the two).
 */
export async function assertPublicUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedAddressError('The URL is not valid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new BlockedAddressError('Only http and https URLs are allowed');
  if (url.username || url.password) throw new BlockedAddressError('URLs must not carry credentials');
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal'))
    throw new BlockedAddressError(`${url.hostname} is an internal address`);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      throw new BlockedAddressError(`${url.hostname} does not resolve`);
    }
  }
  if (addresses.length === 0 || addresses.some(isInternalAddress))
    throw new BlockedAddressError(`${url.hostname} resolves to a loopback, private, link-local or metadata address`);
  return url;
}

/** Reads a response body up to a limit; larger bodies fail instead of filling memory. */
export async function readLimited(response: Response, maxBytes = OUTBOUND_MAX_BYTES): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > maxBytes) throw new Error(`response larger than ${maxBytes} bytes`);
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new Error(`response larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The body as a web stream (for streaming consumers like the MCP SDK) that errors past
 * maxBytes: counted on the socket's own stream, one step fewer than a web transform.
 */
function limitedBody(res: http.IncomingMessage, maxBytes: number): ReadableStream<Uint8Array> {
  let total = 0;
  res.on('data', (chunk: Buffer) => {
    total += chunk.byteLength;
    if (total > maxBytes) res.destroy(new Error(`response larger than ${maxBytes} bytes`));
  });
  return Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>;
}

export interface GuardedFetchOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
  maxBytes?: number;
}

/**
 * The DNS lookup every outbound socket uses: the addresses are checked when the connection is
 * made, so a name cannot resolve to a public address for the check and to an internal one
 * for the connection (DNS rebinding).
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookupCallback(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return (callback as (e: Error) => void)(err);
      if (!allowPrivate && (addresses.length === 0 || addresses.some((a) => isInternalAddress(a.address)))) {
        return (callback as (e: Error) => void)(
          Object.assign(new Error(`${hostname} resolves to an internal address`), { code: 'EBLOCKED' }),
        );
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

async function bodyBytes(body: RequestInit['body']): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  return Buffer.from(await new Response(body as ConstructorParameters<typeof Response>[0]).arrayBuffer());
}

/**
 * fetch over node:http(s) with the SSRF guard (URL check, and the address check on the socket
 * itself), a timeout and a size limit, and no redirects followed (a redirect could lead to an
 * internal address). The MCP transport and the OAuth calls use it.
 */
export function guardedFetch(options: GuardedFetchOptions) {
  const lookupFn = guardedLookup(options.allowPrivate);
  return async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const request = input instanceof Request ? input : null;
    const target = await assertPublicUrl(
      typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      options.allowPrivate,
    );
    // An AbortController held by a live timer, not AbortSignal.timeout()/any(): on Node 20 a
    // derived signal nothing else references can be garbage-collected before it fires, and the
    // call then hangs for ever (seen under load).
    const controller = new AbortController();
    const { signal } = controller;
    const timeoutMs = options.timeoutMs ?? OUTBOUND_TIMEOUT_MS;
    const timer = setTimeout(
      () => controller.abort(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' })),
      timeoutMs,
    );
    for (const outer of [init.signal, request?.signal]) {
      if (!outer) continue;
      if (outer.aborted) controller.abort(outer.reason);
      else outer.addEventListener('abort', () => controller.abort(outer.reason), { once: true });
    }
    const headers = new Headers(request?.headers);
    new Headers(init.headers).forEach((value, name) => headers.set(name, value));
    const body = await bodyBytes(init.body ?? (request && request.body ? await request.arrayBuffer() : undefined));
    if (body && !headers.has('content-length')) headers.set('content-length', String(body.length));
    const method = (init.method ?? request?.method ?? 'GET').toUpperCase();
    const transport = target.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const req = transport.request(
        target,
        { method, headers: Object.fromEntries(headers.entries()), lookup: lookupFn, signal },
        (res) => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v);
            else if (value !== undefined) responseHeaders.set(name, value);
          }
          const status = res.statusCode ?? 502;
          const noBody = method === 'HEAD' || status === 204 || status === 304;
          const stream = noBody ? null : limitedBody(res, options.maxBytes ?? OUTBOUND_MAX_BYTES);
          if (noBody) res.resume();
          // The deadline covers the body too: the timer stops once the response is fully read.
          // Passing the deadline (or the caller's abort) mid-body ends the body with that reason,
          // not the bare "aborted" of a connection lost.
          const endBody = () => res.destroy(signal.reason as Error);
          signal.addEventListener('abort', endBody, { once: true });
          res.once('close', () => {
            clearTimeout(timer);
            signal.removeEventListener('abort', endBody);
          });
          resolve(new Response(stream, { status, statusText: res.statusMessage, headers: responseHeaders }));
        },
      );
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(
          signal.aborted
            ? Object.assign(new Error(`request aborted: ${String((signal.reason as Error)?.message ?? 'timeout')}`), {
                name: 'AbortError',
                cause: err,
              })
            : err,
        );
      });
      if (body) req.end(body);
      else req.end();
    });
  };
}

/** A guardedRequest's response: read it with bodyChunks, which holds it to its size limit. */
export type GuardedResponse = http.IncomingMessage & { maxBytes: number };

/** A guardedRequest response's body, chunk by chunk; past its size limit the body fails. */
export async function* bodyChunks(res: GuardedResponse): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > res.maxBytes) {
      res.destroy();
      throw new Error(`response larger than ${res.maxBytes} bytes`);
    }
    yield chunk;
  }
}

/**
 * guardedFetch's request for a caller that reads node streams (the MCP gateway's upstream calls,
 * connectors/mcp-calls.ts): the same URL check, socket address check, deadline and size limit,
 * without building web Request, Headers, Response and stream objects for every call. The
 * deadline covers the body: past it, the body ends with that error (bodyChunks holds it to `maxBytes`).
 */
export async function guardedRequest(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
  options: GuardedFetchOptions,
): Promise<GuardedResponse> {
  const target = await assertPublicUrl(url, options.allowPrivate);
  const timeoutMs = options.timeoutMs ?? OUTBOUND_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? OUTBOUND_MAX_BYTES;
  const body = init.body === undefined ? undefined : Buffer.from(init.body);
  const headers = body ? { ...init.headers, 'content-length': String(body.length) } : init.headers;
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let response: http.IncomingMessage | null = null;
    const timer = setTimeout(() => {
      const reason = Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' });
      if (response) response.destroy(reason);
      else req.destroy(reason);
    }, timeoutMs);
    const req = transport.request(
      target,
      { method: init.method, headers, lookup: guardedLookup(options.allowPrivate) },
      (res) => {
        response = res;
        res.once('close', () => clearTimeout(timer));
        resolve(Object.assign(res, { maxBytes }));
      },
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}
