import { callJson, endpoint, isCount, isObject } from './http.js';
import {
  ProviderError,
  type ChatMessage,
  type FailureKind,
  type ProviderAdapter,
  type SseEvent,
  type StreamPiece,
} from './types.js';

const ANTHROPIC_VERSION = '2023-06-01';

/**
 * System messages become the top-level `system` field; consecutive messages of one role are
 * joined, since the Messages API expects user and assistant turns to alternate.
 */
function toAnthropic(messages: readonly ChatMessage[]): {
  system?: string;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
} {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content);
  const turns: Array<{ role: 'user' | 'assistant'; content: string }> = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const last = turns[turns.length - 1];
    if (last && last.role === m.role) last.content += `\n\n${m.content}`;
    else turns.push({ role: m.role, content: m.content });
  }
  return { ...(system.length > 0 ? { system: system.join('\n\n') } : {}), messages: turns };
}

/** An `error` event's error.type, as the HTTP status it stands for would be classified. */
const STREAM_ERROR_KIND: Readonly<Record<string, FailureKind>> = {
  rate_limit_error: 'rate_limited',
  authentication_error: 'auth',
  permission_error: 'auth',
  invalid_request_error: 'refused',
};

/**
 * A Messages stream event: message_start (usage.input_tokens), content_block_delta
 * (text_delta), message_delta (usage.output_tokens, cumulative), message_stop, error; ping and
 * the content block markers say nothing we need.
 */
function piece(event: SseEvent): StreamPiece {
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    throw new ProviderError('anthropic', 'malformed', 'a stream event is not JSON');
  }
  if (!isObject(data)) throw new ProviderError('anthropic', 'malformed', 'a stream event is not an object');
  const type = typeof data.type === 'string' ? data.type : event.event;
  const usage = (u: unknown): StreamPiece => {
    if (!isObject(u)) return {};
    return {
      ...(isCount(u.input_tokens) ? { inputTokens: u.input_tokens } : {}),
      ...(isCount(u.output_tokens) ? { outputTokens: u.output_tokens } : {}),
    };
  };
  switch (type) {
    case 'message_start': {
      const message = isObject(data.message) ? data.message : {};
      return { ...usage(message.usage), ...(typeof message.model === 'string' ? { model: message.model } : {}) };
    }
    case 'content_block_delta':
      return isObject(data.delta) && data.delta.type === 'text_delta' && typeof data.delta.text === 'string'
        ? { text: data.delta.text }
        : {};
    case 'message_delta':
      return usage(data.usage);
    case 'message_stop':
      return { finished: true };
    case 'error': {
      const error = isObject(data.error) ? data.error : {};
      const kind = STREAM_ERROR_KIND[String(error.type)] ?? 'server';
      throw new ProviderError('anthropic', kind, `stream error: ${String(error.message ?? error.type).slice(0, 200)}`);
    }
    default:
      return {};
  }
}

/** Anthropic Messages API: POST {base}/v1/messages, x-api-key, anthropic-version; usage.input_tokens/output_tokens. */
export const anthropicAdapter: ProviderAdapter = {
  name: 'anthropic',
  defaultModel: 'claude-3-5-haiku-latest',

  async chat(config, request, outbound, signal) {
    const body = await callJson(
      'anthropic',
      endpoint(config.baseUrl, '/v1/messages', 'v1'),
      {
        method: 'POST',
        headers: { 'x-api-key': config.apiKey, 'anthropic-version': ANTHROPIC_VERSION },
        body: { model: request.model, max_tokens: request.maxOutputTokens, ...toAnthropic(request.messages) },
      },
      outbound,
      signal,
    );
    if (!isObject(body) || !Array.isArray(body.content) || !isObject(body.usage))
      throw new ProviderError('anthropic', 'malformed', 'no content or usage in the answer');
    const texts = body.content
      .filter(
        (b): b is { type: 'text'; text: string } => isObject(b) && b.type === 'text' && typeof b.text === 'string',
      )
      .map((b) => b.text);
    if (texts.length === 0 && body.content.length > 0)
      throw new ProviderError('anthropic', 'malformed', 'no text block in the answer');
    const { input_tokens: input, output_tokens: output } = body.usage;
    if (!isCount(input) || !isCount(output))
      throw new ProviderError('anthropic', 'malformed', 'usage.input_tokens/output_tokens missing');
    return {
      content: texts.join(''),
      model: typeof body.model === 'string' ? body.model : request.model,
      inputTokens: input,
      outputTokens: output,
    };
  },

  stream(config, request) {
    return {
      url: endpoint(config.baseUrl, '/v1/messages', 'v1'),
      headers: { 'x-api-key': config.apiKey, 'anthropic-version': ANTHROPIC_VERSION },
      body: {
        model: request.model,
        max_tokens: request.maxOutputTokens,
        ...toAnthropic(request.messages),
        stream: true,
      },
      piece,
    };
  },

  async ping(config, outbound, signal) {
    const body = await callJson(
      'anthropic',
      endpoint(config.baseUrl, '/v1/models', 'v1'),
      { method: 'GET', headers: { 'x-api-key': config.apiKey, 'anthropic-version': ANTHROPIC_VERSION } },
      outbound,
      signal,
    );
    if (!isObject(body) || !Array.isArray(body.data))
      throw new ProviderError('anthropic', 'malformed', 'the model list is not {data: [...]}');
  },
};
