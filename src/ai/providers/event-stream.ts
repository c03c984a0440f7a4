import { guardedFetch, readLimited } from '../../lib/outbound.js';
import { classifyStatus, thrownError } from './http.js';
import { ProviderError, type OutboundOptions, type ProviderName, type SseEvent, type StreamPiece } from './types.js';

/** Largest error body read from a refused stream call. */
const MAX_ERROR_BYTES = 64 * 1024;
/**
 * Largest event stream read: every token costs an event of a few hundred bytes of JSON, so a
 * long answer is far larger as a stream than as one body.
 */
const MAX_STREAM_BYTES = 16 * 1024 * 1024;

/**
 * A streamed call to a provider (docs/ai.md, Streamed runs): the same address check, deadline and
 * status classification as a JSON call; a 2xx answer must be `text/event-stream`. Returns its
 * events as they arrive; ending the iteration early closes the connection.
 */
export async function callStream(
  provider: ProviderName,
  url: URL,
  init: { headers: Record<string, string>; body: unknown },
  options: OutboundOptions,
  signal: AbortSignal,
): Promise<AsyncGenerator<SseEvent, void, undefined>> {
  const send = guardedFetch({
    allowPrivate: options.allowPrivateNetworks,
    timeoutMs: options.timeoutMs,
    maxBytes: MAX_STREAM_BYTES,
  });
  let response: Response;
  try {
    response = await send(url, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...init.headers },
      body: JSON.stringify(init.body),
      signal,
    });
  } catch (err) {
    throw thrownError(provider, url, err, options, signal);
  }
  if (response.status < 200 || response.status >= 300) {
    const text = await readLimited(response, MAX_ERROR_BYTES).catch(() => '');
    throw classifyStatus(provider, response.status, text);
  }
  if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
    await response.body?.cancel().catch(() => undefined);
    throw new ProviderError(provider, 'malformed', 'the answer is not an event stream', response.status);
  }
  return events(provider, url, response.body, options, signal);
}

/** Server-Sent Events parsing (the WHATWG event stream format): fields, blank-line dispatch, comments. */
async function* events(
  provider: ProviderName,
  url: URL,
  body: ReadableStream<Uint8Array>,
  options: OutboundOptions,
  signal: AbortSignal,
): AsyncGenerator<SseEvent, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = 'message';
  let data: string[] = [];
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw thrownError(provider, url, err, options, signal);
      }
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, { stream: true });
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        // A CR last in the buffer may be the first half of a CRLF: wait for the next chunk.
        if (end < 0 || (buffer[end] === '\r' && end === buffer.length - 1)) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event, data: data.join('\n') };
          event = 'message';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
    }
  } finally {
    // Closes the upstream connection when the consumer stops early (a client gone, an error).
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * One provider's answer as it streams: the text so far, and the usage once the provider has
 * reported it (null until then).
 */
export class ProviderStream {
  text = '';
  inputTokens: number | null = null;
  outputTokens: number | null = null;
  private finished = false;

  constructor(
    readonly provider: ProviderName,
    public model: string,
    private readonly source: AsyncGenerator<SseEvent, void, undefined>,
    private readonly piece: (event: SseEvent) => StreamPiece,
  ) {}

  /**
   * The next piece of answer text, or null once the provider has finished its answer and
   * reported its usage. Throws a ProviderError for a stream that fails or ends early.
   */
  async next(): Promise<string | null> {
    for (;;) {
      const { value, done } = await this.source.next();
      if (done) {
        if (!this.finished)
          throw new ProviderError(this.provider, 'malformed', 'the stream ended before the answer was finished');
        if (this.inputTokens === null || this.outputTokens === null)
          throw new ProviderError(this.provider, 'malformed', 'the stream carried no usage');
        return null;
      }
      const piece = this.piece(value);
      if (piece.inputTokens !== undefined) this.inputTokens = piece.inputTokens;
      if (piece.outputTokens !== undefined) this.outputTokens = piece.outputTokens;
      if (piece.model) this.model = piece.model;
      if (piece.finished) this.finished = true;
      if (piece.text) {
        this.text += piece.text;
        return piece.text;
      }
    }
  }

  /** Stops reading and closes the connection. */
  async close(): Promise<void> {
    await this.source.return(undefined).catch(() => undefined);
  }
}
