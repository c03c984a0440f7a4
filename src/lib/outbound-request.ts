import http from 'node:http';
import https from 'node:https';
import {
  assertPublicUrl,
  type GuardedFetchOptions,
  guardedLookup,
  OUTBOUND_MAX_BYTES,
  OUTBOUND_TIMEOUT_MS,
} from './outbound.js';

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
