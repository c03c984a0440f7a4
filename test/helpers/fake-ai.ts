import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeKind = 'openai' | 'anthropic' | 'google';
/** ok: a proper answer with usage; the others: the failure they name. */
type FakeMode = 'ok' | '429' | '500' | 'hang' | 'malformed' | 'no-usage' | 'bad-request' | 'huge';

/**
 * How a streamed answer goes: ok (every delta, usage, the end mark); fail-mid (two deltas,
 * then the provider's own failure: openai drops the connection, anthropic sends an `error`
 * event, google an error chunk); hold (two deltas, then nothing until the client leaves);
 * no-end (every delta, then the connection ends without usage or end mark); error-chunk (openai
 * only: two deltas, then the in-band error chunk `streamError`, then the end, as OpenAI, Ollama
 * and vLLM report a failure once the 200 is sent); hold-before-text (the 200 and the stream's
 * opening events, Anthropic's and Gemini's with the input usage, then nothing until the client
 * leaves: a provider that accepted the request and has not produced its first token yet).
 */
type StreamMode = 'ok' | 'fail-mid' | 'hold' | 'no-end' | 'error-chunk' | 'hold-before-text';

interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | null;
}

export interface FakeProvider {
  kind: FakeKind;
  url: string;
  apiKey: string;
  mode: FakeMode;
  reply: string;
  usage: { input: number; output: number };
  requests: RecordedRequest[];
  streamMode: StreamMode;
  /** The data of the error chunk an openai fake sends in error-chunk mode. */
  streamError: Record<string, unknown>;
  /** Answers (streamed, or never given in hang mode) whose client closed the connection first. */
  closedByClient: number;
  /** Streamed answers whose status and opening events were written out (flushed to the socket). */
  streamsOpened: number;
  /** Chat calls only (model-list probes excluded). */
  chats(): RecordedRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => resolve(data));
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json' }).end(text);
}

const pieces = (text: string) => text.match(/\S+\s*/g) ?? [];

/** A streamed answer in the provider's real event stream format (see StreamMode). */
function streamAnswer(fake: FakeProvider, res: ServerResponse, body: Record<string, unknown> | null, model?: string) {
  const { kind, usage } = fake;
  if (kind === 'openai' && (body?.stream_options as { include_usage?: boolean })?.include_usage !== true)
    return send(res, 400, { error: { message: 'the fake expects stream_options.include_usage' } });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const mode = fake.streamMode;
  const words = pieces(fake.reply);
  const shown = mode === 'ok' || mode === 'no-end' ? words : words.slice(0, 2);
  const data = (value: unknown) => res.write(`data: ${JSON.stringify(value)}\n\n`);
  const event = (name: string, value: unknown) => res.write(`event: ${name}\ndata: ${JSON.stringify(value)}\n\n`);
  const chunk = (delta: object, extra: object = {}) =>
    data({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      model: body?.model,
      choices: [{ index: 0, delta, finish_reason: null }],
      ...extra,
    });
  const gemini = (text: string | null, final: boolean) =>
    data({
      candidates: [
        {
          content: { role: 'model', parts: text === null ? [] : [{ text }] },
          ...(final ? { finishReason: 'STOP' } : {}),
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: usage.input,
        ...(final ? { candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output } : {}),
      },
      modelVersion: decodeURIComponent(model ?? ''),
    });

  // Gemini has no opening event: a first chunk without text carries the input usage.
  if (mode === 'hold-before-text' && kind === 'google') gemini(null, false);
  if (kind === 'openai') chunk({ role: 'assistant', content: '' });
  if (kind === 'anthropic') {
    event('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: body?.model,
        content: [],
        usage: { input_tokens: usage.input, output_tokens: 1 },
      },
    });
    event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    event('ping', { type: 'ping' });
  }
  if (mode === 'hold-before-text') {
    res.write(': opened\n\n', () => fake.streamsOpened++);
    return;
  }
  for (const word of shown) {
    if (kind === 'openai') chunk({ content: word });
    else if (kind === 'anthropic')
      event('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: word },
      });
    else gemini(word, false);
  }
  if (mode === 'hold') return;
  if (mode === 'no-end') return res.end();
  if (mode === 'error-chunk' && kind === 'openai') {
    data(fake.streamError);
    return res.end();
  }
  if (mode === 'fail-mid' || mode === 'error-chunk') {
    // The connection drops once the deltas are on the wire (destroy() would discard them).
    if (kind === 'openai') return res.write('\n', () => res.destroy());
    if (kind === 'anthropic') {
      event('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
      return res.end();
    }
    data({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } });
    return res.end();
  }
  if (kind === 'openai') {
    data({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      model: body?.model,
      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
    });
    data({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      model: body?.model,
      choices: [],
      usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
    });
    res.write('data: [DONE]\n\n');
  } else if (kind === 'anthropic') {
    event('content_block_stop', { type: 'content_block_stop', index: 0 });
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: usage.output },
    });
    event('message_stop', { type: 'message_stop' });
  } else gemini(null, true);
  res.end();
}

/**
 * A provider on 127.0.0.1 port 0 speaking one real wire format: OpenAI chat completions,
 * Anthropic Messages or Gemini generateContent (and each one's model list), checking the key
 * the way the real API does (bearer, x-api-key with anthropic-version, x-goog-api-key).
 */
export async function startFakeProvider(
  kind: FakeKind,
  apiKey = `sk-test-${kind}-0123456789abcdef`,
): Promise<FakeProvider> {
  const fake: FakeProvider = {
    kind,
    url: '',
    apiKey,
    mode: 'ok',
    reply: `hello from ${kind}`,
    usage: { input: 12, output: 7 },
    requests: [],
    streamMode: 'ok',
    streamError: {
      error: {
        message: 'The server had an error while processing your request. Sorry about that!',
        type: 'server_error',
        param: null,
        code: null,
      },
    },
    closedByClient: 0,
    streamsOpened: 0,
    chats: () => fake.requests.filter((r) => r.method === 'POST'),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer(async (req, res) => {
    res.on('close', () => {
      if (!res.writableEnded) fake.closedByClient++;
    });
    const raw = await readBody(req);
    const path = req.url ?? '/';
    let body: Record<string, unknown> | null = null;
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : null;
    } catch {
      body = null;
    }
    fake.requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });

    const keyOk =
      kind === 'openai'
        ? req.headers.authorization === `Bearer ${fake.apiKey}`
        : kind === 'anthropic'
          ? req.headers['x-api-key'] === fake.apiKey && req.headers['anthropic-version'] === '2023-06-01'
          : req.headers['x-goog-api-key'] === fake.apiKey;
    if (!keyOk) return send(res, 401, { error: { message: 'invalid api key' } });

    const isList = req.method === 'GET' && (path === '/v1/models' || path === '/v1beta/models');
    if (fake.mode === 'hang') return; // never answers; the client's timeout ends it
    if (fake.mode === '429') return send(res, 429, { error: { message: 'rate limited' } });
    if (fake.mode === '500') return send(res, 500, { error: { message: 'boom' } });
    if (fake.mode === 'malformed') return send(res, 200, '<html>not json');
    if (fake.mode === 'huge') return send(res, 200, `{"pad":"${'x'.repeat(3 * 1024 * 1024)}"}`);
    if (isList)
      return send(
        res,
        200,
        kind === 'google' ? { models: [{ name: 'models/gemini-2.0-flash' }] } : { object: 'list', data: [{ id: 'm' }] },
      );
    if (fake.mode === 'bad-request') return send(res, 400, { error: { message: 'prompt is too long' } });

    const { input, output } = fake.usage;
    const streamed = /^\/v1beta\/models\/([^/:]+):streamGenerateContent\?alt=sse$/.exec(path);
    if (req.method === 'POST' && (body?.stream === true || streamed))
      return streamAnswer(fake, res, body, streamed?.[1]);
    if (kind === 'openai' && req.method === 'POST' && path === '/v1/chat/completions') {
      const usage =
        fake.mode === 'no-usage'
          ? undefined
          : { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
      return send(res, 200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: body?.model,
        choices: [{ index: 0, message: { role: 'assistant', content: fake.reply }, finish_reason: 'stop' }],
        usage,
      });
    }
    if (kind === 'anthropic' && req.method === 'POST' && path === '/v1/messages') {
      const usage = fake.mode === 'no-usage' ? undefined : { input_tokens: input, output_tokens: output };
      return send(res, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: body?.model,
        content: [{ type: 'text', text: fake.reply }],
        stop_reason: 'end_turn',
        usage,
      });
    }
    const gemini = /^\/v1beta\/models\/([^/:]+):generateContent$/.exec(path);
    if (kind === 'google' && req.method === 'POST' && gemini) {
      const usageMetadata =
        fake.mode === 'no-usage'
          ? undefined
          : { promptTokenCount: input, candidatesTokenCount: output, totalTokenCount: input + output };
      return send(res, 200, {
        candidates: [{ content: { role: 'model', parts: [{ text: fake.reply }] }, finishReason: 'STOP' }],
        usageMetadata,
        modelVersion: decodeURIComponent(gemini[1]),
      });
    }
    return send(res, 404, { error: { message: `no route ${req.method} ${path}` } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/**
 * `gantry provider set` pointing at a fake (its URL and current key), one model, priced $1 in
 * and $1 out per 1M tokens: how the end-to-end and cluster tests configure a provider by CLI.
 */
export function providerSetArgs(fake: FakeProvider, model: string): string[] {
  return [
    'provider',
    'set',
    fake.kind,
    '--base-url',
    fake.url,
    '--api-key',
    fake.apiKey,
    '--model',
    model,
    '--price-in',
    '1',
    '--price-out',
    '1',
  ];
}
