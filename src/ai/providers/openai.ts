import { callJson, endpoint, isCount, isObject } from './http.js';
import { ProviderError, type ProviderAdapter } from './types.js';

/**
 * OpenAI-compatible chat completions (OpenAI, and local Ollama or vLLM servers):
 * POST {base}/v1/chat/completions with a bearer key; usage.prompt_tokens/completion_tokens.
 */
export const openaiAdapter: ProviderAdapter = {
  name: 'openai',
  defaultModel: 'gpt-4o-mini',

  async chat(config, request, outbound, signal) {
    const body = await callJson(
      'openai',
      endpoint(config.baseUrl, '/v1/chat/completions', 'v1'),
      {
        method: 'POST',
        headers: { authorization: `Bearer ${config.apiKey}` },
        body: { model: request.model, messages: request.messages, max_tokens: request.maxOutputTokens, stream: false },
      },
      outbound,
      signal,
    );
    if (!isObject(body) || !Array.isArray(body.choices) || !isObject(body.usage))
      throw new ProviderError('openai', 'malformed', 'no choices or usage in the answer');
    const choice = body.choices[0];
    const message = isObject(choice) && isObject(choice.message) ? choice.message : null;
    if (!message || typeof message.content !== 'string')
      throw new ProviderError('openai', 'malformed', 'the first choice has no message content');
    const { prompt_tokens: input, completion_tokens: output } = body.usage;
    if (!isCount(input) || !isCount(output))
      throw new ProviderError('openai', 'malformed', 'usage.prompt_tokens/completion_tokens missing');
    return {
      content: message.content,
      model: typeof body.model === 'string' ? body.model : request.model,
      inputTokens: input,
      outputTokens: output,
    };
  },

  async ping(config, outbound, signal) {
    const body = await callJson(
      'openai',
      endpoint(config.baseUrl, '/v1/models', 'v1'),
      { method: 'GET', headers: { authorization: `Bearer ${config.apiKey}` } },
      outbound,
      signal,
    );
    if (!isObject(body) || !Array.isArray(body.data))
      throw new ProviderError('openai', 'malformed', 'the model list is not {data: [...]}');
  },
};
