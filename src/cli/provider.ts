import type { Command } from 'commander';
import { withApp } from './context.js';
import { confirmed, withYes, type YesOption } from './confirm.js';
import { emit, numberOption, required, table, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';
import { PROVIDER_NAMES } from '../ai/providers/types.js';
import { checkBaseUrl } from '../ai/admin.js';
import { refusalOf } from './checks.js';

interface SetOptions extends CommonOptions {
  baseUrl?: string;
  apiKey?: string;
  model?: string[];
  priority?: string;
  priceIn?: string;
  priceOut?: string;
}

/** `gantry provider set|list|remove|prices`: the AI providers (keys stored sealed, never printed). */
export function makeProviderCommands(program: Command, io: CliIo): Command {
  const provider = program.command('provider').description('AI providers the chat runs are routed over');

  withCommon(
    provider
      .command('set')
      .argument('<name>', PROVIDER_NAMES.join('|'))
      .description('configure (or reconfigure) a provider')
      .option('--base-url <url>', 'API base URL, e.g. https://api.openai.com (no version segment)')
      .option('--api-key <key>', 'API key (stored encrypted, never shown again)')
      .option('--model <model...>', 'models offered, the first being the default')
      .option('--priority <n>', 'routing order, lower first (default 100)')
      .option('--price-in <usd>', 'USD per 1M input tokens, for the given models')
      .option('--price-out <usd>', 'USD per 1M output tokens, for the given models'),
  ).action(async (name: string, options: SetOptions) => {
    if (!(PROVIDER_NAMES as readonly string[]).includes(name))
      throw new UsageError(`unknown provider "${name}" (known: ${PROVIDER_NAMES.join(', ')})`);
    const baseUrl = await required(io, options.baseUrl, {
      flag: 'base-url',
      message: 'Base URL',
      check: refusalOf(checkBaseUrl),
    });
    const apiKey = await required(io, options.apiKey, { flag: 'api-key', message: 'API key', kind: 'password' });
    const priority = numberOption('priority', options.priority, { integer: true });
    await withApp(io, options, async (app) => {
      const shown = await app.services.ai.admin.set({
        name,
        baseUrl,
        apiKey,
        models: options.model,
        priority,
        priceIn: numberOption('price-in', options.priceIn),
        priceOut: numberOption('price-out', options.priceOut),
      });
      emit(
        io,
        options,
        shown,
        () =>
          `provider ${shown.name} set: ${shown.baseUrl}, models ${shown.models.join(', ')}, priority ${shown.priority}`,
      );
    });
  });

  withCommon(provider.command('list').description('configured providers (keys are never printed)')).action(
    async (options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const rows = await app.services.ai.admin.list();
        emit(io, options, rows, () =>
          table(
            rows.map((r) => ({
              ...r,
              models: r.models.join(','),
              key: r.apiKeyLastFour ? `...${r.apiKeyLastFour}` : '(set)',
            })),
            ['name', 'priority', 'baseUrl', 'models', 'key'],
          ),
        );
      });
    },
  );

  withCommon(
    withYes(provider.command('remove').argument('<name>').description('remove a provider and its key')),
  ).action(async (name: string, options: CommonOptions & YesOption) => {
    await withApp(io, options, async (app) => {
      const { admin } = app.services.ai;
      const configured = await admin.addresses();
      const target = configured.find((p) => p.name === name);
      // An unknown name is refused by the service (NOT_FOUND), without a question.
      if (target) {
        const others = configured.filter((p) => p !== target).map((p) => p.name);
        await confirmed(
          io,
          options,
          `Remove AI provider ${name} (${target.baseUrl}) and delete its API key? Chat runs then go to ${others.length ? others.join(', ') : 'no provider: they fail until one is set'}.`,
        );
      }
      const result = await admin.remove(name);
      emit(io, options, result, () => `provider ${name} removed`);
    });
  });

  withCommon(provider.command('prices').description('the price table (USD per 1M tokens) used for run costs')).action(
    async (options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const rows = await app.services.ai.admin.prices();
        emit(io, options, rows, () =>
          table(rows, ['provider', 'model', 'inputUsdPerMtok', 'outputUsdPerMtok', 'source']),
        );
      });
    },
  );
  return provider;
}
