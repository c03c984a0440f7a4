import type { Attempt } from './router.js';
import type { RunRow } from './store.js';

export function presentRun(row: RunRow) {
  return {
    id: row.id,
    sessionId: row.session_id,
    accountId: row.account_id,
    userId: row.user_id,
    status: row.status,
    provider: row.provider,
    model: row.model,
    requestedModel: row.requested_model,
    message: row.reply === null ? null : { role: 'assistant' as const, content: row.reply },
    usage: {
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      totalTokens: row.input_tokens + row.output_tokens,
    },
    estimatedCostUsd: row.cost_micros === null ? null : row.cost_micros / 1_000_000,
    chargedUsd: row.charged_micros / 1_000_000,
    attempts: JSON.parse(row.attempts) as Attempt[],
    errorCode: row.error_code,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    durationMs: row.duration_ms,
    providerLatencyMs: row.provider_latency_ms,
  };
}
