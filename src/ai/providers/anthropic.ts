import { callJson, endpoint, isCount, isObject } from './http.js';
import { ProviderError, type ChatMessage, type ProviderAdapter } from './types.js';

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
