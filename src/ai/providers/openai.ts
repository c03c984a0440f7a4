import { callJson, endpoint, isCount, isObject, streamErrorKind } from './http.js';
import { ProviderError, type ProviderAdapter, type SseEvent, type StreamPiece } from './types.js';

/** A chat completion chunk (`stream: true`): choices[].delta.content, then a usage chunk, then [DONE]. */
function piece(event: SseEvent): StreamPiece {
  if (event.data === '[DONE]') return { finished: true };
  let chunk: unknown;
  try {
    chunk = JSON.parse(event.data);
  } catch {
    throw new ProviderError('openai', 'malformed', 'a stream chunk is not JSON');
  }
  if (!isObject(chunk)) throw new ProviderError('openai', 'malformed', 'a stream chunk is not an object');
  // A failure after the 200: OpenAI and Ollama send {error: {message, type, code}}; vLLM puts
  // the HTTP status in code, and older versions send the error object itself (object: "error").
  const error = isObject(chunk.error) ? chunk.error : chunk.object === 'error' ? chunk : null;
  if (error) {
    const kind = streamErrorKind(error.code, `${String(error.type ?? '')} ${String(error.code ?? '')}`);
    throw new ProviderError('openai', kind, `stream error: ${String(error.message ?? error.type).slice(0, 200)}`);
  }
  const out: StreamPiece = typeof chunk.model === 'string' ? { model: chunk.model } : {};
  const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  if (isObject(choice) && isObject(choice.delta) && typeof choice.delta.content === 'string')
    out.text = choice.delta.content;
  if (isObject(chunk.usage)) {
    const { prompt_tokens: input, completion_tokens: output } = chunk.usage;
    if (!isCount(input) || !isCount(output))
      throw new ProviderError('openai', 'malformed', 'usage.prompt_tokens/completion_tokens missing');
    Object.assign(out, { inputTokens: input, outputTokens: output });
  }
  return out;
}

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

  stream(config, request) {
    return {
      url: endpoint(config.baseUrl, '/v1/chat/completions', 'v1'),
      headers: { authorization: `Bearer ${config.apiKey}` },
      body: {
        model: request.model,
        messages: request.messages,
        max_tokens: request.maxOutputTokens,
        stream: true,
        // Without it the stream carries no usage at all.
        stream_options: { include_usage: true },
      },
      piece,
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
