import type { TraceSpan, Tracing } from '../lib/tracing.js';
import type { CircuitState } from './breaker.js';
import type { ProviderConfig, ProviderError, ProviderName } from './providers/types.js';

/** `gen_ai.provider.name` as the GenAI semantic conventions spell it (Gemini's API is `gcp.gemini`). */
const GEN_AI_PROVIDER: Readonly<Record<ProviderName, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  google: 'gcp.gemini',
};

/** What a provider reported of its answer; null where it said nothing. */
interface ChatUsage {
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
}

/**
 * The spans and events of the router's walk over the providers (docs/operations.md, Traces): a
 * client span `chat {model}` per provider attempt, a child of the active span (the run's
 * request); a skipped provider (its circuit open) and a move to the next one after a failure
 * are events of the active span. Never a prompt, an answer or a key: names, counts, kinds.
 */
export function providerSpans(tracing: Tracing) {
  return {
    /** Opens an attempt's span, before the provider is called. */
    attempt(config: ProviderConfig, model: string, maxOutputTokens: number): TraceSpan {
      if (!tracing.enabled) return tracing.activeSpan();
      const { hostname, port, protocol } = new URL(config.baseUrl);
      return tracing.startSpan(`chat ${model}`, {
        kind: 'client',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': GEN_AI_PROVIDER[config.name],
          'gen_ai.request.model': model,
          'gen_ai.request.max_tokens': maxOutputTokens,
          'server.address': hostname.replace(/^\[(.*)\]$/, '$1'),
          'server.port': port ? Number(port) : protocol === 'https:' ? 443 : 80,
        },
      });
    },

    /**
     * Ends an attempt: its usage as far as reported, and how it went: succeeded, cancelled
     * (the client left: the provider did nothing wrong) or failed (its failure kind).
     */
    end(span: TraceSpan, how: 'succeeded' | 'cancelled' | ProviderError, usage?: ChatUsage | null): void {
      if (!span.isRecording()) return;
      if (usage?.model) span.setAttribute('gen_ai.response.model', usage.model);
      if (usage?.inputTokens != null) span.setAttribute('gen_ai.usage.input_tokens', usage.inputTokens);
      if (usage?.outputTokens != null) span.setAttribute('gen_ai.usage.output_tokens', usage.outputTokens);
      if (how === 'cancelled') span.setAttribute('gantry.ai.outcome', 'cancelled');
      else if (how !== 'succeeded') tracing.recordError(span, how.kind);
      span.end();
    },

    /** A provider passed over: its circuit lets no call through. */
    skipped(provider: ProviderName, model: string, state: CircuitState): void {
      if (!tracing.enabled) return;
      tracing.activeSpan().addEvent('gantry.ai.provider_skipped', {
        'gen_ai.provider.name': GEN_AI_PROVIDER[provider],
        'gen_ai.request.model': model,
        'gantry.ai.circuit': state,
      });
    },

    /** The walk moves on to `next` after `failure` of the provider before it. */
    fallback(failure: ProviderError, next: ProviderName): void {
      if (!tracing.enabled) return;
      tracing.activeSpan().addEvent('gantry.ai.fallback', {
        'gantry.ai.failed_provider': GEN_AI_PROVIDER[failure.provider],
        'error.type': failure.kind,
        'gen_ai.provider.name': GEN_AI_PROVIDER[next],
      });
    },
  };
}

export type ProviderSpans = ReturnType<typeof providerSpans>;
