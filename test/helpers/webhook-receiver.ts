import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface ReceivedHook {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as it came (the signature is over these bytes). */
  body: string;
}

/**
 * A status subscriber's webhook endpoint on 127.0.0.1: it records every POST and answers the
 * status its test sets per path (200 unless told). `verify` checks a request as the docs tell a
 * subscriber to (docs/status.md, Webhooks), with nothing of Gantry's code.
 */
export function webhookReceiver() {
  const received: ReceivedHook[] = [];
  const answers = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(answers.get(path) ?? 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  return {
    received,
    /** The status code `path` answers from now on. */
    answer(path: string, status: number) {
      answers.set(path, status);
    },
    at: (path: string) => received.filter((r) => r.path === path),
    url: (path: string) => `http://127.0.0.1:${(server.address() as { port: number }).port}${path}`,
    listen: () => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve())),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * What a subscriber does with a request: read `X-Gantry-Signature: t=UNIX,v1=HEX`, refuse a
 * time more than 5 minutes from its own, and compare HMAC-SHA256(secret, `${t}.${body}`) in
 * constant time. True when the request is genuine.
 */
export function verifySignature(hook: ReceivedHook, secret: string, nowMs: number): boolean {
  const header = String(hook.headers['x-gantry-signature'] ?? '');
  const parts = Object.fromEntries(header.split(',').map((kv) => kv.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1 || Math.abs(nowMs / 1000 - t) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${hook.body}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
