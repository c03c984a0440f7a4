/** The three provider kinds Gantry speaks to; models/health always lists all of them. */
export const PROVIDER_NAMES = ['openai', 'anthropic', 'google'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

/** A provider as the router uses it: config with the API key opened. */
export interface ProviderConfig {
  name: ProviderName;
  baseUrl: string;
  apiKey: string;
  models: string[];
  priority: number;
}

interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  maxOutputTokens: number;
}

export interface ChatResult {
  content: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/** How a call went wrong, which decides what the router does next (docs/ai.md). */
export type FailureKind =
  | 'rate_limited' // 429
  | 'server' // 5xx
  | 'timeout'
  | 'network' // connection refused, reset, DNS
  | 'malformed' // 2xx with a body that is not the wire format, or too large
  | 'auth' // 401/403: the configured key is wrong
  | 'refused' // other 4xx: the provider rejected this request
  | 'blocked'; // the address is loopback/private and GANTRY_ALLOW_PRIVATE_NETWORKS is off

export class ProviderError extends Error {
  constructor(
    readonly provider: ProviderName,
    readonly kind: FailureKind,
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'ProviderError';
  }

  /** Retryable elsewhere: the provider is unwell (or busy), not the request. */
  get retryable(): boolean {
    return this.kind === 'rate_limited' || this.kind === 'server' || this.kind === 'timeout' || this.kind === 'network';
  }

  /** Whether it counts against the provider's circuit: everything but a refused request. */
  get countsAsFailure(): boolean {
    return this.kind !== 'refused';
  }
}

/** One Server-Sent Event as a provider sent it. */
export interface SseEvent {
  event: string;
  data: string;
}

/** What one event of a provider's stream says; usage counts are the totals so far. */
export interface StreamPiece {
  text?: string;
  inputTokens?: number;
  outputTokens?: number;
  model?: string;
  /** The provider's end-of-answer mark ([DONE], message_stop, a finishReason). */
  finished?: boolean;
}

/** A streamed call: where and what to send, and how to read each event (throws ProviderError). */
interface StreamCall {
  url: URL;
  headers: Record<string, string>;
  body: unknown;
  piece(event: SseEvent): StreamPiece;
}

export interface OutboundOptions {
  allowPrivateNetworks: boolean;
  timeoutMs: number;
}

/** One wire format. */
export interface ProviderAdapter {
  readonly name: ProviderName;
  readonly defaultModel: string;
  chat(
    config: ProviderConfig,
    request: ChatRequest,
    outbound: OutboundOptions,
    signal: AbortSignal,
  ): Promise<ChatResult>;
  /** The streamed form of chat (docs/ai.md, Streamed runs). */
  stream(config: ProviderConfig, request: ChatRequest): StreamCall;
  /** A free, cheap call proving the endpoint and the key work (the model list). */
  ping(config: ProviderConfig, outbound: OutboundOptions, signal: AbortSignal): Promise<void>;
}
