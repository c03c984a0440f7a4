import { BlockedAddressError, guardedFetch, readLimited } from '../../lib/outbound.js';
import { ProviderError, type FailureKind, type OutboundOptions, type ProviderName } from './types.js';

/** Largest provider response body read; a bigger one is a malformed answer. */
const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

export function classifyStatus(provider: ProviderName, status: number, body: string): ProviderError {
  const detail = body.slice(0, 200).replace(/\s+/g, ' ');
  const message = `HTTP ${status}${detail ? `: ${detail}` : ''}`;
  if (status === 429) return new ProviderError(provider, 'rate_limited', message, status);
  if (status >= 500) return new ProviderError(provider, 'server', message, status);
  if (status === 401 || status === 403)
    return new ProviderError(provider, 'auth', `HTTP ${status}: the API key was refused`, status);
  if (status >= 300 && status < 400)
    return new ProviderError(provider, 'malformed', `HTTP ${status}: redirects are not followed`, status);
  return new ProviderError(provider, 'refused', message, status);
}

/**
 * The failure kind of an error a provider reports inside a stream whose HTTP status was 200
 * (docs/ai.md, Streamed runs): by the HTTP status the error carries, else by its type or code
 * name, else a fault of the provider, as a 5xx would be.
 */
export function streamErrorKind(status: unknown, name: string): FailureKind {
  if (typeof status === 'number' && status >= 400 && status < 600) {
    if (status === 429) return 'rate_limited';
    if (status >= 500) return 'server';
    return status === 401 || status === 403 ? 'auth' : 'refused';
  }
  if (/rate_limit|quota|resource_exhausted/i.test(name)) return 'rate_limited';
  if (/authentication|permission|api_key|unauthenticated/i.test(name)) return 'auth';
  if (/invalid_request|invalid_argument|badrequest/i.test(name)) return 'refused';
  return 'server';
}

/** What a throw of the guarded fetch (or of reading its body) says about the provider. */
export function thrownError(
  provider: ProviderName,
  url: URL,
  err: unknown,
  options: OutboundOptions,
  signal: AbortSignal,
): ProviderError {
  if (err instanceof ProviderError) return err;
  const code = (err as NodeJS.ErrnoException).code ?? ((err as Error).cause as NodeJS.ErrnoException | undefined)?.code;
  if (err instanceof BlockedAddressError || code === 'EBLOCKED') {
    return new ProviderError(
      provider,
      'blocked',
      `${url.hostname} is a loopback or private address; set GANTRY_ALLOW_PRIVATE_NETWORKS=true to allow it`,
    );
  }
  if (signal.aborted) return new ProviderError(provider, 'timeout', 'the call was cancelled');
  if ((err as Error).name === 'AbortError' || (err as Error).name === 'TimeoutError')
    return new ProviderError(provider, 'timeout', `no answer within ${options.timeoutMs} ms`);
  if (/larger than/.test((err as Error).message ?? ''))
    return new ProviderError(provider, 'malformed', (err as Error).message);
  return new ProviderError(provider, 'network', `network error: ${(err as Error).message}`);
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
  // The shared guarded fetch checks the address on the socket itself (no DNS-rebinding gap),
  // never follows redirects and caps the body.
  const send = guardedFetch({
    allowPrivate: options.allowPrivateNetworks,
    timeoutMs: options.timeoutMs,
    maxBytes: MAX_RESPONSE_BYTES,
  });
  let response: Response;
  let text: string;
  try {
    response = await send(url, {
      method: init.method,
      headers: {
        accept: 'application/json',
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      signal,
    });
    text = await readLimited(response, MAX_RESPONSE_BYTES).catch((err: Error) => {
      throw /larger than/.test(err.message)
        ? new ProviderError(provider, 'malformed', err.message, response.status)
        : err;
    });
  } catch (err) {
    throw thrownError(provider, url, err, options, signal);
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

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
