import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callStream, ProviderStream } from '../../src/ai/providers/event-stream.js';
import { ADAPTERS } from '../../src/ai/providers/index.js';
import { ProviderError } from '../../src/ai/providers/types.js';

const outbound = { allowPrivateNetworks: true, timeoutMs: 2000 };

/** A server that answers each POST with the next scripted answer: status, content type and raw chunks. */
describe('provider event streams (the SSE reader under the streamed runs)', () => {
  let server: Server;
  let url: URL;
  let next: { status: number; type: string; chunks: string[]; hold?: boolean };
  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', async () => {
        res.writeHead(next.status, { 'content-type': next.type });
        for (const chunk of next.chunks) {
          res.write(chunk);
          // Each chunk on its own read: an event may be cut anywhere, a CRLF between two reads.
          await new Promise((r) => setImmediate(r));
        }
        if (!next.hold) res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/messages`);
  });
  after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });

  const read = async (chunks: string[], type = 'text/event-stream') => {
    next = { status: 200, type, chunks };
    const events = await callStream(
      'anthropic',
      url,
      { headers: {}, body: {} },
      outbound,
      new AbortController().signal,
    );
    const seen = [];
    for await (const e of events) seen.push(e);
    return seen;
  };

  it('splits events on blank lines whatever the line endings and chunk boundaries; joins data lines; skips comments', async () => {
    const seen = await read([
      ': keep-alive\r\n\r\nevent: a\r',
      '\ndata: {"x":',
      '1}\r\n\r\ndata: first\ndata:second\n\n',
      'event: b\rdata: c\r\r',
      'data: never dispatched',
    ]);
    assert.deepEqual(seen, [
      { event: 'a', data: '{"x":1}' },
      { event: 'message', data: 'first\nsecond' },
      { event: 'b', data: 'c' },
    ]);
  });

  it('refuses a 2xx that is not an event stream (malformed) and classifies an error status', async () => {
    await assert.rejects(read(['{"id":1}'], 'application/json'), (e: ProviderError) => e.kind === 'malformed');
    next = { status: 529, type: 'application/json', chunks: ['{"type":"error","error":{"type":"overloaded_error"}}'] };
    await assert.rejects(
      callStream('anthropic', url, { headers: {}, body: {} }, outbound, new AbortController().signal),
      (e: ProviderError) => e.kind === 'server' && e.status === 529,
    );
  });

  it('reads Anthropic usage from message_start and message_delta, and maps error events to failure kinds', async () => {
    const { piece } = ADAPTERS.anthropic.stream(
      { name: 'anthropic', baseUrl: 'http://x', apiKey: 'k', models: ['m'], priority: 1 },
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 10 },
    );
    next = {
      status: 200,
      type: 'text/event-stream',
      chunks: [
        'event: message_start\ndata: {"type":"message_start","message":{"model":"m-1","usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n',
        'event: message_delta\ndata: {"type":"message_delta","delta":{},"usage":{"output_tokens":9}}\n\n',
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      ],
    };
    const events = await callStream(
      'anthropic',
      url,
      { headers: {}, body: {} },
      outbound,
      new AbortController().signal,
    );
    const stream = new ProviderStream('anthropic', 'm', events, piece);
    assert.equal(await stream.next(), 'Hi');
    assert.equal(stream.inputTokens, 5);
    assert.equal(await stream.next(), null);
    assert.deepEqual([stream.text, stream.model, stream.inputTokens, stream.outputTokens], ['Hi', 'm-1', 5, 9]);

    const kinds = ['rate_limit_error', 'overloaded_error', 'invalid_request_error'].map((type) => {
      try {
        piece({ event: 'error', data: JSON.stringify({ type: 'error', error: { type, message: 'x' } }) });
        return 'none';
      } catch (err) {
        return (err as ProviderError).kind;
      }
    });
    assert.deepEqual(kinds, ['rate_limited', 'server', 'refused']);
  });

  it('classifies OpenAI-compatible and Gemini error chunks by the status or name they carry', () => {
    const config = (name: 'openai' | 'google') => ({
      name,
      baseUrl: 'http://x',
      apiKey: 'k',
      models: ['m'],
      priority: 1,
    });
    const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }], maxOutputTokens: 10 };
    const kindOf = (name: 'openai' | 'google', data: unknown) => {
      try {
        ADAPTERS[name].stream(config(name), request).piece({ event: 'message', data: JSON.stringify(data) });
        return 'none';
      } catch (err) {
        assert.ok(err instanceof ProviderError);
        return [err.kind, err.status, err.message];
      }
    };
    const openai = (error: object) => kindOf('openai', { error });
    assert.deepEqual(openai({ message: 'Sorry', type: 'server_error', param: null, code: null }), [
      'server',
      null,
      'stream error: Sorry',
    ]);
    assert.equal(openai({ message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' })[0], 'rate_limited');
    assert.equal(openai({ message: 'x', type: 'insufficient_quota', code: 'insufficient_quota' })[0], 'rate_limited');
    assert.equal(openai({ message: 'x', type: 'invalid_request_error', code: null })[0], 'refused');
    assert.equal(openai({ message: 'x', type: 'invalid_request_error', code: 'invalid_api_key' })[0], 'auth');
    // Ollama's only type is api_error: a fault of the server.
    assert.equal(openai({ message: 'model runner stopped', type: 'api_error', code: null })[0], 'server');
    // vLLM: the status in code, inside {error} or (older versions) as the chunk itself.
    assert.equal(openai({ object: 'error', message: 'too long', type: 'BadRequestError', code: 400 })[0], 'refused');
    assert.equal(
      kindOf('openai', { object: 'error', message: 'busy', type: 'InternalServerError', code: 503 })[0],
      'server',
    );
    assert.equal(kindOf('openai', { object: 'error', message: 'x', type: 'BadRequestError', code: 400 })[0], 'refused');

    const gemini = (code: number, status: string) => kindOf('google', { error: { code, message: 'm', status } })[0];
    assert.deepEqual(
      [
        gemini(503, 'UNAVAILABLE'),
        gemini(429, 'RESOURCE_EXHAUSTED'),
        gemini(400, 'INVALID_ARGUMENT'),
        gemini(403, 'PERMISSION_DENIED'),
      ],
      ['server', 'rate_limited', 'refused', 'auth'],
    );
  });

  it('the deadline covers the whole answer: a stream that stops mid-way fails as a timeout; the caller aborting is not one', async () => {
    next = { status: 200, type: 'text/event-stream', chunks: ['data: one\n\n'], hold: true };
    const open = (signal: AbortSignal) =>
      callStream('openai', url, { headers: {}, body: {} }, { ...outbound, timeoutMs: 300 }, signal);
    const timed = await open(new AbortController().signal);
    assert.deepEqual((await timed.next()).value, { event: 'message', data: 'one' });
    const started = Date.now();
    await assert.rejects(timed.next(), (e: ProviderError) => e.kind === 'timeout' && /300 ms/.test(e.message));
    assert.ok(Date.now() - started < 2000);

    const caller = new AbortController();
    const aborted = await open(caller.signal);
    await aborted.next();
    setTimeout(() => caller.abort(), 20);
    await assert.rejects(aborted.next(), (e: ProviderError) => e.kind === 'timeout' && /cancelled/.test(e.message));
  });
});
