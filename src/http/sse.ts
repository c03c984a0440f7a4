import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { Metrics } from '../lib/metrics.js';

/**
 * An SSE body. hapi hands a stream response its compressor (gzip when the client accepts it)
 * through setCompressor; each event is flushed through it so nothing sits in a buffer.
 */
export class SseStream extends PassThrough {
  private compressor: { flush(): void } | null = null;

  setCompressor(compressor: { flush(): void }): void {
    this.compressor = compressor;
  }

  send(text: string): void {
    if (this.writableEnded || this.destroyed) return;
    this.write(text);
    this.compressor?.flush();
  }
}

/** One event in the text/event-stream format (data as one line of JSON). */
export const sseFrame = (event: string, data: unknown, id?: string) =>
  `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Headers every event stream answer carries: no caching, and no buffering in a proxy (nginx honours X-Accel-Buffering). */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/**
 * Counts a response as an open event stream of `kind` in `gantry_sse_streams_open` until its
 * connection closes (docs/operations.md, Metrics).
 */
export function countOpenStream(metrics: Metrics, kind: string, res: ServerResponse): void {
  if (res.destroyed || res.writableFinished) return;
  const gauge = metrics.gauge('gantry_sse_streams_open', 'Open Server-Sent Events streams, by stream', ['stream']);
  gauge.inc({ stream: kind });
  res.once('close', () => gauge.dec({ stream: kind }));
}
