import type { Kernel } from '../kernel.js';
import type { Principal } from '../http/auth.js';
import type { AccountsService } from '../accounts/service.js';
import type { AccountContext } from '../accounts/access.js';
import type { WalletService } from '../wallet/service.js';
import type { Caller, PromptContext } from './context.js';
import type { ModelPrice } from './pricing.js';
import type { ChatMessage, ProviderConfig } from './providers/types.js';
import type { Candidate, Router } from './router.js';
import type { getSession, RunRow } from './store.js';

/** What a run is made of as it goes through runs.ts, stream-runs.ts and run-settlement.ts. */

export interface RunInput {
  messages: ChatMessage[];
  sessionId?: string;
  model?: string;
  /** Answer as Server-Sent Events (stream-runs.ts); the route picks the entry point by it. */
  stream?: boolean;
}

/** What the AI service lends the run: its router, prompt context and cached configuration. */
export interface RunDeps {
  kernel: Kernel;
  accounts: AccountsService;
  wallet: WalletService;
  router: Router;
  context: PromptContext;
  providers(): Promise<ProviderConfig[]>;
  prices(): Promise<Map<string, ModelPrice>>;
  entitled(principal: Principal, headerAccountId: string | null): Promise<AccountContext>;
  /** A run still "running" after this long was left by a crashed process. */
  staleMs: number;
}

/** A run that passed every check before money and providers are involved. */
export interface Admitted {
  principal: Principal;
  input: RunInput;
  ctx: AccountContext;
  caller: Caller;
  candidates: Candidate[];
  /** A session id Gantry generated: new by construction. */
  fresh: boolean;
  sessionId: string;
  session: Awaited<ReturnType<typeof getSession>>;
}

/** A run recorded as running, its worst-case cost held against the wallet. */
export interface Held {
  prompt: ChatMessage[];
  priceTable: Map<string, ModelPrice>;
  row: RunRow;
}
