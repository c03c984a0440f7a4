import http from 'node:http';
import { createGunzip } from 'node:zlib';

interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

export interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: SseEvent[];
  comments: string[];
  /** Everything received, as text (an answer that is not a stream, say). */
  raw: string;
  ended: boolean;
  /** Resolves with the first event (from the start) matching, waiting up to timeoutMs. */
  next(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves when a comment line matching arrives. */
  comment(match: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves when the server ends the stream. */
  end(timeoutMs?: number): Promise<void>;
  close(): void;
}

/**
 * A minimal EventSource over node:http (EventSource cannot send Authorization); with a body,
 * a POST answered as a stream.
 */
export function openSse(url: string, headers: Record<string, string>, body?: unknown): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const method = body === undefined ? 'GET' : 'POST';
    const sent = body === undefined ? {} : { 'content-type': 'application/json' };
    const req = http.request(url, { method, headers: { accept: 'text/event-stream', ...sent, ...headers } }, (res) => {
      const waiters = new Set<() => void>();
      const poke = () => waiters.forEach((w) => w());
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: [],
        comments: [],
        raw: '',
        ended: false,
        next(match, timeoutMs = 5000) {
          return wait(() => client.events.find(match), timeoutMs, 'event');
        },
        comment(pattern, timeoutMs = 5000) {
          return wait(() => client.comments.find((c) => pattern.test(c)), timeoutMs, `comment ${pattern}`);
        },
        end(timeoutMs = 5000) {
          return wait(() => (client.ended ? true : undefined), timeoutMs, 'end').then(() => undefined);
        },
        close() {
          req.destroy();
        },
      };
      function wait<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
        return new Promise((ok, fail) => {
          const check = () => {
            const found = probe();
            if (found !== undefined) {
              waiters.delete(check);
              clearTimeout(timer);
              ok(found);
            }
          };
          const timer = setTimeout(() => {
            waiters.delete(check);
            fail(new Error(`timed out waiting for ${what}; got ${JSON.stringify(client.events)}`));
          }, timeoutMs);
          waiters.add(check);
          check();
        });
      }
      const stream = res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip()) : res;
      stream.setEncoding('utf8');
      let buffer = '';
      stream.on('data', (chunk: string) => {
        client.raw += chunk;
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event: SseEvent = { event: 'message', data: '' };
          let hasField = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) client.comments.push(line.slice(1).trim());
            else if (line.startsWith('event: ')) (event.event = line.slice(7)), (hasField = true);
            else if (line.startsWith('data: ')) (event.data = line.slice(6)), (hasField = true);
            else if (line.startsWith('id: ')) (event.id = line.slice(4)), (hasField = true);
          }
          if (hasField && event.data) client.events.push(event);
        }
        poke();
      });
      const ended = () => {
        client.ended = true;
        poke();
      };
      stream.on('end', ended);
      res.on('close', ended);
      resolve(client);
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
