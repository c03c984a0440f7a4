import { badRequest, notFound } from '../http/errors.js';
import { inTransaction } from '../db/tx.js';
import type { Kernel } from '../kernel.js';
import { open, reseal, seal, sealedKeyId } from '../lib/sealed.js';
import { ADAPTERS } from './providers/index.js';
import { PROVIDER_NAMES, type ProviderConfig, type ProviderName } from './providers/types.js';
import { microsToUsd, usdPerMtokToMicros } from './pricing.js';
import {
  deleteProvider,
  getProvider,
  listPrices,
  listProviders,
  setProviderKey,
  upsertPrice,
  upsertProvider,
  type ProviderRow,
} from './store.js';

/** Change-feed topic: a provider was set or removed (the server reloads and resets its circuit). */
export const AI_PROVIDERS_TOPIC = 'ai.providers';

const DEFAULT_PRIORITY = 100;
const MODEL = /^[A-Za-z0-9._:/@-]{1,200}$/;

export interface ProviderInput {
  name: string;
  baseUrl: string;
  apiKey: string;
  /** Replaces the model list when given; the first model is the provider's default. */
  models?: string[];
  priority?: number;
  /** USD per 1M tokens, applied to every model of this call (both or neither). */
  priceIn?: number;
  priceOut?: number;
}

export const isProviderName = (name: string): name is ProviderName =>
  (PROVIDER_NAMES as readonly string[]).includes(name);

/** Associated data binding a sealed key to its row. */
const keyAad = (name: string) => `ai_providers:${name}:api_key`;

export function checkBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('--base-url must be an http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('--base-url must be an http(s) URL');
  if (url.username || url.password)
    throw badRequest('--base-url must not carry credentials; pass the key with --api-key');
  if (url.search || url.hash) throw badRequest('--base-url must not carry a query or fragment');
  return url.href.replace(/\/+$/, '');
}

/** A provider row as shown to operators: never the key, only its last four characters. */
function presentProvider(row: ProviderRow, apiKey: string) {
  const models = JSON.parse(row.models) as string[];
  return {
    name: row.name,
    baseUrl: row.base_url,
    apiKeyLastFour: apiKey.length >= 12 ? apiKey.slice(-4) : null,
    models: models.length > 0 ? models : [ADAPTERS[row.name as ProviderName].defaultModel],
    priority: row.priority,
    keyId: row.key_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Operator configuration of the AI providers and the price table (CLI `gantry provider`). */
export function createProviderAdmin(kernel: Kernel) {
  const { db, clock, changes, secrets } = kernel;
  // The keyring is read live: `gantry secrets rotate` swaps the active key in place.
  const keyring = secrets;

  function openRow(row: ProviderRow): ProviderConfig {
    const models = JSON.parse(row.models) as string[];
    const name = row.name as ProviderName;
    return {
      name,
      baseUrl: row.base_url,
      apiKey: open(keyring, row.api_key_sealed, keyAad(name)),
      models: models.length > 0 ? models : [ADAPTERS[name].defaultModel],
      priority: row.priority,
    };
  }

  return {
    openRow,

    /** Every configured provider with its key opened, in routing order. */
    async configured(): Promise<ProviderConfig[]> {
      return (await listProviders(db)).map(openRow);
    },

    async set(input: ProviderInput) {
      if (!isProviderName(input.name))
        throw badRequest(`unknown provider "${input.name}" (known: ${PROVIDER_NAMES.join(', ')})`);
      const name = input.name;
      const baseUrl = checkBaseUrl(input.baseUrl);
      const apiKey = input.apiKey.trim();
      if (apiKey.length === 0 || apiKey.length > 4096 || /\s/.test(apiKey))
        throw badRequest('--api-key must be a non-empty key without spaces');
      for (const m of input.models ?? []) if (!MODEL.test(m)) throw badRequest(`"${m}" is not a valid model name`);
      if (
        input.priority !== undefined &&
        (!Number.isInteger(input.priority) || input.priority < 0 || input.priority > 1_000_000)
      )
        throw badRequest('--priority must be an integer from 0 to 1000000');
      if ((input.priceIn === undefined) !== (input.priceOut === undefined))
        throw badRequest('give --price-in and --price-out together');
      for (const p of [input.priceIn, input.priceOut])
        if (p !== undefined && (!Number.isFinite(p) || p < 0 || p > 1_000_000))
          throw badRequest('prices are USD per 1M tokens, from 0 to 1000000');
      return inTransaction(db, async (trx) => {
        const existing = await getProvider(trx, name);
        const now = clock.now().toISOString();
        const models =
          input.models && input.models.length > 0
            ? [...new Set(input.models)]
            : existing
              ? (JSON.parse(existing.models) as string[])
              : [];
        const sealed = seal(keyring, apiKey, keyAad(name));
        const row: ProviderRow = {
          name,
          base_url: baseUrl,
          api_key_sealed: sealed,
          key_id: sealedKeyId(sealed) ?? keyring.activeCredentialKeyId,
          models: JSON.stringify(models),
          priority: input.priority ?? existing?.priority ?? DEFAULT_PRIORITY,
          created_at: existing?.created_at ?? now,
          updated_at: now,
        };
        await upsertProvider(trx, row);
        if (input.priceIn !== undefined && input.priceOut !== undefined) {
          for (const model of models.length > 0 ? models : [ADAPTERS[name].defaultModel]) {
            await upsertPrice(trx, {
              provider: name,
              model,
              input_micros_per_mtok: usdPerMtokToMicros(input.priceIn),
              output_micros_per_mtok: usdPerMtokToMicros(input.priceOut),
              source: 'operator',
              updated_at: now,
            });
          }
        }
        await changes.publish(trx, AI_PROVIDERS_TOPIC, name);
        return presentProvider(row, apiKey);
      });
    },

    async list() {
      return (await listProviders(db)).map((row) => presentProvider(row, openRow(row).apiKey));
    },

    /** Names and addresses of the configured providers, keys left sealed (what a removal asks about, even with a key this node cannot open). */
    async addresses() {
      return (await listProviders(db)).map((row) => ({
        name: row.name,
        baseUrl: row.base_url,
        priority: row.priority,
      }));
    },

    async remove(name: string) {
      return inTransaction(db, async (trx) => {
        if (!(await deleteProvider(trx, name))) throw notFound(`Provider ${name}`);
        await changes.publish(trx, AI_PROVIDERS_TOPIC, name);
        return { name, removed: true };
      });
    },

    async prices() {
      return (await listPrices(db)).map((p) => ({
        provider: p.provider,
        model: p.model,
        inputUsdPerMtok: microsToUsd(p.input_micros_per_mtok),
        outputUsdPerMtok: microsToUsd(p.output_micros_per_mtok),
        source: p.source,
      }));
    },

    /** Re-seals every provider key under the active credential key (secrets rotation). */
    async resealKeys(): Promise<number> {
      return inTransaction(db, async (trx) => {
        let count = 0;
        for (const row of await listProviders(trx)) {
          if (row.key_id === keyring.activeCredentialKeyId) continue;
          const sealed = reseal(keyring, row.api_key_sealed, keyAad(row.name));
          await setProviderKey(trx, row.name, sealed, sealedKeyId(sealed) ?? keyring.activeCredentialKeyId);
          count++;
        }
        if (count > 0) await changes.publish(trx, AI_PROVIDERS_TOPIC, null);
        return count;
      });
    },
  };
}
