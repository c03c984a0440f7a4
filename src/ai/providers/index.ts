import { anthropicAdapter } from './anthropic.js';
import { googleAdapter } from './google.js';
import { openaiAdapter } from './openai.js';
import type { ProviderAdapter, ProviderName } from './types.js';

export const ADAPTERS: Readonly<Record<ProviderName, ProviderAdapter>> = {
  openai: openaiAdapter,
  anthropic: anthropicAdapter,
  google: googleAdapter,
};
