/** A model's price: micro-dollars per 1M tokens. */
export interface ModelPrice {
  inputMicrosPerMtok: number;
  outputMicrosPerMtok: number;
}

/** Cost of a call in micro-dollars, rounded up so a run is never billed below its price. */
export function costMicros(price: ModelPrice, inputTokens: number, outputTokens: number): number {
  return Math.ceil((inputTokens * price.inputMicrosPerMtok + outputTokens * price.outputMicrosPerMtok) / 1_000_000);
}

/**
 * An upper bound on the input tokens of a prompt: tokenizers of all three providers emit at
 * most one token per UTF-8 byte, plus a few framing tokens per message.
 */
export function inputTokenBound(contents: readonly string[]): number {
  return contents.reduce((sum, c) => sum + Buffer.byteLength(c, 'utf8') + 8, 16);
}

/** USD per 1M tokens (as typed on the CLI) to micro-dollars per 1M tokens. */
export const usdPerMtokToMicros = (usd: number): number => Math.round(usd * 1_000_000);
export const microsToUsd = (micros: number): number => micros / 1_000_000;

/**
 * Tokens in a text when the provider never said (docs/ai.md, Streamed runs): one per four
 * UTF-8 bytes, the usual average of these tokenizers on English text, rounded up.
 */
export const estimateTokens = (text: string): number => Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
