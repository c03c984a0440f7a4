import { callJson, endpoint, isCount, isObject, streamErrorKind } from './http.js';
import { ProviderError, type ChatMessage, type ProviderAdapter, type SseEvent, type StreamPiece } from './types.js';

/** Gemini roles are user and model; system messages become systemInstruction. */
function toGemini(messages: readonly ChatMessage[]) {
  const system = messages.filter((m) => m.role === 'system').map((m) => ({ text: m.content }));
  const contents = messages
    .filter((m) => m.role !== 'system')
    .map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] }));
  return { contents, ...(system.length > 0 ? { systemInstruction: { parts: system } } : {}) };
}

/**
 * A streamGenerateContent chunk (`alt=sse`): a GenerateContentResponse holding the next
 * candidates[0].content.parts[].text and the usageMetadata so far; the last has a finishReason.
 */
function piece(event: SseEvent): StreamPiece {
  let chunk: unknown;
  try {
    chunk = JSON.parse(event.data);
  } catch {
    throw new ProviderError('google', 'malformed', 'a stream chunk is not JSON');
  }
  if (!isObject(chunk)) throw new ProviderError('google', 'malformed', 'a stream chunk is not an object');
  // A failure after the 200: {error: {code (the HTTP status), message, status (its name)}}.
  if (isObject(chunk.error)) {
    const { code, message, status } = chunk.error;
    throw new ProviderError(
      'google',
      streamErrorKind(code, String(status ?? '')),
      `stream error: ${String(message ?? status ?? 'unknown').slice(0, 200)}`,
    );
  }
  const candidate = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
  if (!isObject(candidate) && isObject(chunk.promptFeedback) && typeof chunk.promptFeedback.blockReason === 'string')
    throw new ProviderError('google', 'refused', `the prompt was blocked (${chunk.promptFeedback.blockReason})`, 200);
  const out: StreamPiece = typeof chunk.modelVersion === 'string' ? { model: chunk.modelVersion } : {};
  if (isObject(candidate)) {
    const parts = isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    const text = parts
      .filter((p): p is { text: string } => isObject(p) && typeof p.text === 'string')
      .map((p) => p.text)
      .join('');
    if (text) out.text = text;
    if (typeof candidate.finishReason === 'string') out.finished = true;
  }
  if (isObject(chunk.usageMetadata)) {
    const input = chunk.usageMetadata.promptTokenCount;
    const output = chunk.usageMetadata.candidatesTokenCount ?? 0;
    if (isCount(input) && isCount(output)) Object.assign(out, { inputTokens: input, outputTokens: output });
  }
  return out;
}

/**
 * Google Gemini: POST {base}/v1beta/models/{model}:generateContent with x-goog-api-key;
 * usageMetadata.promptTokenCount/candidatesTokenCount.
 */
export const googleAdapter: ProviderAdapter = {
  name: 'google',
  defaultModel: 'gemini-2.0-flash',

  async chat(config, request, outbound, signal) {
    const body = await callJson(
      'google',
      endpoint(config.baseUrl, `/v1beta/models/${encodeURIComponent(request.model)}:generateContent`, 'v1beta'),
      {
        method: 'POST',
        headers: { 'x-goog-api-key': config.apiKey },
        body: { ...toGemini(request.messages), generationConfig: { maxOutputTokens: request.maxOutputTokens } },
      },
      outbound,
      signal,
    );
    if (!isObject(body) || !isObject(body.usageMetadata))
      throw new ProviderError('google', 'malformed', 'no usageMetadata in the answer');
    const candidate = Array.isArray(body.candidates) ? body.candidates[0] : undefined;
    const parts =
      isObject(candidate) && isObject(candidate.content) && Array.isArray(candidate.content.parts)
        ? candidate.content.parts
        : null;
    if (!parts) {
      const blocked =
        isObject(body.promptFeedback) && typeof body.promptFeedback.blockReason === 'string'
          ? body.promptFeedback.blockReason
          : null;
      if (blocked) throw new ProviderError('google', 'refused', `the prompt was blocked (${blocked})`, 200);
      throw new ProviderError('google', 'malformed', 'no candidate content in the answer');
    }
    const input = body.usageMetadata.promptTokenCount;
    const output = body.usageMetadata.candidatesTokenCount ?? 0;
    if (!isCount(input) || !isCount(output))
      throw new ProviderError('google', 'malformed', 'usageMetadata.promptTokenCount missing');
    const text = parts
      .filter((p): p is { text: string } => isObject(p) && typeof p.text === 'string')
      .map((p) => p.text)
      .join('');
    return {
      content: text,
      model: typeof body.modelVersion === 'string' ? body.modelVersion : request.model,
      inputTokens: input,
      outputTokens: output,
    };
  },

  stream(config, request) {
    const path = `/v1beta/models/${encodeURIComponent(request.model)}:streamGenerateContent`;
    const url = endpoint(config.baseUrl, path, 'v1beta');
    url.searchParams.set('alt', 'sse');
    return {
      url,
      headers: { 'x-goog-api-key': config.apiKey },
      body: { ...toGemini(request.messages), generationConfig: { maxOutputTokens: request.maxOutputTokens } },
      piece,
    };
  },

  async ping(config, outbound, signal) {
    const body = await callJson(
      'google',
      endpoint(config.baseUrl, '/v1beta/models', 'v1beta'),
      { method: 'GET', headers: { 'x-goog-api-key': config.apiKey } },
      outbound,
      signal,
    );
    if (!isObject(body) || !Array.isArray(body.models))
      throw new ProviderError('google', 'malformed', 'the model list is not {models: [...]}');
  },
};
