import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeKind = 'openai' | 'anthropic' | 'google';
/** ok: a proper answer with usage; the others: the failure they name. */
type FakeMode = 'ok' | '429' | '500' | 'hang' | 'malformed' | 'no-usage' | 'bad-request' | 'huge';

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
    chats: () => fake.requests.filter((r) => r.method === 'POST'),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer(async (req, res) => {
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
