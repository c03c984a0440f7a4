import { LRUCache } from 'lru-cache';
import type { Executor } from '../db/tx.js';
import type { ChatMessage } from './providers/types.js';
import { recentSessions, sessionTurns } from './store.js';

/** The prompt-context layers of the cache stats (docs/interface.md, Resources), in the order they enter a prompt. */
const LAYERS = ['persona', 'preferences', 'twin', 'memory', 'session'] as const;
export type Layer = (typeof LAYERS)[number];

/** Caps that keep every layer small. */
const SESSION_TURNS = 10;
const MEMORY_SESSIONS = 3;
const MEMORY_SNIPPET = 160;

interface Entry {
  /** What the layer was computed from: a changed version makes it stale. */
  version: string;
  messages: ChatMessage[];
  /** Memory layer: the sessions it quotes and their opening messages, newest first. */
  sessions?: string[];
  topics?: string[];
}

const memoryText = (topics: readonly string[]): ChatMessage[] =>
  topics.length > 0
    ? [
        {
          role: 'system',
          content: `Recent conversations of this user began with: ${topics.map((t) => JSON.stringify(t)).join('; ')}.`,
        },
      ]
    : [];

/** Where the persona, preferences and twin layers come from: the accounts and identity services. */
export interface Profiles {
  account(accountId: string): Promise<
    | {
        updated_at: string;
        display_name: string | null;
        legal_name: string;
        industry: string | null;
        default_timezone: string | null;
      }
    | undefined
  >;
  user(userId: string): Promise<{ updated_at: string; full_name: string | null; username: string | null } | undefined>;
}

export interface Caller {
  accountId: string;
  userId: string;
}

/**
 * Assembles the context Gantry adds to a chat, one cached layer at a time:
 * - persona: who the assistant works for (the account's display or legal name, industry);
 * - preferences: the account's default timezone;
 * - twin: who the user is (full name, username);
 * - memory: the opening message of the user's few most recent sessions in the account;
 * - session: the earlier turns of this session (each run's last user message and its reply),
 *   added only when the request carries no assistant message (the client did not send history).
 * Layers derived from account and user rows carry those rows' updated_at as version and are
 * recomputed when it moves (whichever process changed them). Runs are written only here, so a
 * completed run updates its session layer in place and drops the memory layer when the set of
 * recent sessions changes. An entitlement change drops the account's layers.
 */
export class PromptContext {
  private readonly cache = new LRUCache<string, Entry>({ max: 2_000, ttl: 10 * 60_000 });

  constructor(
    private readonly db: Executor,
    private readonly profiles: Profiles,
  ) {}

  private key(caller: Caller, layer: Layer, sessionId?: string): string {
    return `${caller.accountId}|${caller.userId}|${layer}${layer === 'session' ? `|${sessionId}` : ''}`;
  }

  private async versions(caller: Caller) {
    const [account, user] = await Promise.all([
      this.profiles.account(caller.accountId),
      this.profiles.user(caller.userId),
    ]);
    return { account, user };
  }

  private async layer(
    key: string,
    version: string,
    compute: () => Promise<ChatMessage[] | Entry> | ChatMessage[],
  ): Promise<ChatMessage[]> {
    const hit = this.cache.get(key);
    if (hit && hit.version === version) return hit.messages;
    const computed = await compute();
    const entry = Array.isArray(computed) ? { version, messages: computed } : computed;
    this.cache.set(key, entry);
    return entry.messages;
  }

  /** The context messages to put before the caller's own (`fresh`: the session is new, it has no turns). */
  async assemble(
    caller: Caller,
    sessionId: string,
    request: readonly ChatMessage[],
    fresh = false,
  ): Promise<ChatMessage[]> {
    const { account, user } = await this.versions(caller);
    const system = (text: string | null): ChatMessage[] => (text ? [{ role: 'system', content: text }] : []);
    const persona = await this.layer(this.key(caller, 'persona'), account?.updated_at ?? '', () => {
      if (!account) return [];
      const name = account.display_name ?? account.legal_name;
      return system(
        `You are the assistant of ${name}${account.industry ? `, an organisation in ${account.industry}` : ''}.`,
      );
    });
    const preferences = await this.layer(this.key(caller, 'preferences'), account?.updated_at ?? '', () =>
      system(account?.default_timezone ? `Give dates and times in the ${account.default_timezone} timezone.` : null),
    );
    const twin = await this.layer(this.key(caller, 'twin'), user?.updated_at ?? '', () => {
      if (!user || (!user.full_name && !user.username)) return [];
      return system(
        `You are talking with ${[user.full_name, user.username ? `@${user.username}` : null].filter(Boolean).join(' ')}.`,
      );
    });
    const memory = await this.layer(this.key(caller, 'memory'), '', async (): Promise<Entry> => {
      const sessions = await recentSessions(this.db, caller.accountId, caller.userId, MEMORY_SESSIONS);
      const quoted = sessions
        .map((s) => ({
          id: s.id,
          topic: (JSON.parse(s.firstMessages) as ChatMessage[])
            .find((m) => m.role === 'user')
            ?.content.slice(0, MEMORY_SNIPPET),
        }))
        .filter((q): q is { id: string; topic: string } => !!q.topic);
      const topics = quoted.map((q) => q.topic);
      return { version: '', messages: memoryText(topics), sessions: quoted.map((q) => q.id), topics };
    });
    const sendsHistory = request.some((m) => m.role === 'assistant');
    const session = sendsHistory
      ? []
      : await this.layer(this.key(caller, 'session', sessionId), '', async () => {
          if (fresh) return [];
          const turns = await sessionTurns(this.db, caller.accountId, sessionId, SESSION_TURNS);
          return turns.flatMap((t): ChatMessage[] => {
            const asked = (JSON.parse(t.messages) as ChatMessage[]).filter((m) => m.role === 'user').at(-1);
            return [
              ...(asked ? [asked] : []),
              ...(t.reply !== null ? [{ role: 'assistant' as const, content: t.reply }] : []),
            ];
          });
        });
    const header = [...persona, ...preferences, ...twin, ...memory];
    return header.length > 0 || session.length > 0
      ? [
          ...(header.length > 0 ? [{ role: 'system' as const, content: header.map((m) => m.content).join('\n') }] : []),
          ...session,
        ]
      : [];
  }

  /**
   * A run of the caller succeeded: its turn joins the session layer. The memory layer gains the
   * session in front when this was the session's first run (`opening`: its first user
   * message), keeps as it is when it already quotes the session, and is recomputed otherwise.
   */
  runCompleted(
    caller: Caller,
    sessionId: string,
    asked: ChatMessage | undefined,
    reply: string,
    opening: string | null,
  ): void {
    const sessionKey = this.key(caller, 'session', sessionId);
    const held = this.cache.get(sessionKey);
    if (held) {
      const messages = [
        ...held.messages,
        ...(asked ? [asked] : []),
        { role: 'assistant' as const, content: reply },
      ].slice(-SESSION_TURNS * 2);
      this.cache.set(sessionKey, { version: '', messages });
    }
    const memoryKey = this.key(caller, 'memory');
    const memory = this.cache.get(memoryKey);
    if (!memory || memory.sessions?.includes(sessionId)) return;
    if (opening !== null && memory.sessions && memory.topics) {
      const topics = [opening.slice(0, MEMORY_SNIPPET), ...memory.topics].slice(0, MEMORY_SESSIONS);
      this.cache.set(memoryKey, {
        version: '',
        messages: memoryText(topics),
        sessions: [sessionId, ...memory.sessions].slice(0, MEMORY_SESSIONS),
        topics,
      });
    } else {
      this.cache.delete(memoryKey);
    }
  }

  /** Drops every layer of an account (entitlement changed). */
  forgetAccount(accountId: string): void {
    for (const key of [...this.cache.keys()]) if (key.startsWith(`${accountId}|`)) this.cache.delete(key);
  }

  /** The layers held now for the caller (stale account/user layers are not counted). */
  async cachedLayers(caller: Caller): Promise<Layer[]> {
    const { account, user } = await this.versions(caller);
    const fresh = (layer: Layer, version: string) => {
      const hit = this.cache.get(this.key(caller, layer));
      return !!hit && hit.version === version;
    };
    const held: Layer[] = [];
    if (fresh('preferences', account?.updated_at ?? '')) held.push('preferences');
    if (fresh('persona', account?.updated_at ?? '')) held.push('persona');
    if (fresh('twin', user?.updated_at ?? '')) held.push('twin');
    const sessionPrefix = `${caller.accountId}|${caller.userId}|session|`;
    if ([...this.cache.keys()].some((k) => k.startsWith(sessionPrefix) && this.cache.has(k))) held.push('session');
    if (fresh('memory', '')) held.push('memory');
    return held;
  }
}
