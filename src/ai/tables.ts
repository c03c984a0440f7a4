/** An AI provider the operator configured (one row per provider kind). */
export interface AiProvidersTable {
  name: string; // openai, anthropic, google
  base_url: string;
  api_key_sealed: string; // lib/sealed.ts, associated data "ai_providers:<name>"
  key_id: string; // credential key the api key is sealed under (rotation)
  models: string; // JSON array; the first is the default model
  priority: number; // lower is tried first
  created_at: string;
  updated_at: string;
}

/** Price per model, micro-dollars per 1M tokens (integers keep sums exact). */
export interface AiModelPricesTable {
  provider: string;
  model: string;
  input_micros_per_mtok: number;
  output_micros_per_mtok: number;
  source: string; // default (migration) or operator (provider set --price-*)
  updated_at: string;
}

/** A chat session: owned by the member who started it, inside one account. */
interface AiSessionsTable {
  account_id: string;
  id: string;
  user_id: string;
  created_at: string;
  last_run_at: string;
}

export interface AiRunsTable {
  id: string;
  account_id: string;
  user_id: string;
  session_id: string;
  status: string; // running, succeeded, failed
  requested_model: string | null;
  provider: string | null;
  model: string | null;
  messages: string; // JSON: the caller's messages
  reply: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number | null; // null when the model has no price
  reserved_micros: number; // held against the wallet while running
  charged_micros: number; // debited from the wallet
  attempts: string; // JSON: one entry per provider tried
  error_code: string | null;
  started_at: string;
  completed_at: string | null;
  duration_ms: number | null;
  provider_latency_ms: number | null;
}

export interface AiTables {
  ai_providers: AiProvidersTable;
  ai_model_prices: AiModelPricesTable;
  ai_sessions: AiSessionsTable;
  ai_runs: AiRunsTable;
}
