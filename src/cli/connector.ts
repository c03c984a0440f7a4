import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, required, table, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';
import { httpUrlProblem, keyProblem } from '../connectors/definitions.js';

interface DefineOptions extends CommonOptions {
  key?: string;
  name?: string;
  auth?: string;
  authorizeUrl?: string;
  tokenUrl?: string;
  clientId?: string;
  clientSecret?: string;
  scope?: string[];
  pkce?: boolean;
  checkUrl?: string;
  configSchema?: string;
}

/** `gantry connector define|list` (docs/connectors.md). */
export function makeConnectorCommands(program: Command, io: CliIo): void {
  const connector = program.command('connector').description('connector definitions');
  withCommon(
    connector
      .command('define')
      .description('add a system connector definition for an external OAuth provider')
      .option('--key <key>', 'connector key (also the callback path segment)')
      .option('--name <name>', 'display name')
      .option('--auth <kind>', 'authentication kind (oauth2)')
      .option('--authorize-url <url>', "provider's authorization endpoint")
      .option('--token-url <url>', "provider's token endpoint")
      .option('--client-id <id>', 'OAuth client id at the provider')
      .option('--client-secret <secret>', 'OAuth client secret (stored encrypted)')
      .option('--scope <scope...>', 'default scopes')
      .option('--pkce', 'send PKCE S256 with the authorization request')
      .option('--check-url <url>', 'URL the health test calls with the token')
      .option('--config-schema <file>', 'JSON Schema file for instance config'),
  ).action(async (options: DefineOptions) => {
    const key = await required(io, options.key, { flag: 'key', message: 'Connector key', check: keyProblem });
    const name = await required(io, options.name, { flag: 'name', message: 'Name' });
    const auth = await required(io, options.auth, {
      flag: 'auth',
      message: 'Auth kind',
      kind: 'select',
      choices: ['oauth2'],
    });
    if (auth !== 'oauth2') throw new UsageError('--auth must be oauth2');
    const authorizeUrl = await required(io, options.authorizeUrl, {
      flag: 'authorize-url',
      message: 'Authorization URL',
      check: httpUrlProblem,
    });
    const tokenUrl = await required(io, options.tokenUrl, {
      flag: 'token-url',
      message: 'Token URL',
      check: httpUrlProblem,
    });
    const clientId = await required(io, options.clientId, { flag: 'client-id', message: 'Client id' });
    const clientSecret = await required(io, options.clientSecret, {
      flag: 'client-secret',
      message: 'Client secret',
      kind: 'password',
    });
    let configSchema: Record<string, unknown> | null = null;
    if (options.configSchema) {
      try {
        configSchema = JSON.parse(readFileSync(options.configSchema, 'utf8')) as Record<string, unknown>;
      } catch (err) {
        throw new UsageError(
          `--config-schema: cannot read JSON from ${options.configSchema} (${(err as Error).message})`,
        );
      }
    }
    await withApp(io, options, async (app) => {
      const { definition, callbackUrl } = await app.services.connectors.defineSystem({
        key,
        name,
        authorizeUrl,
        tokenUrl,
        clientId,
        clientSecret,
        scopes: options.scope ?? [],
        pkce: !!options.pkce,
        checkUrl: options.checkUrl ?? null,
        configSchema,
      });
      emit(
        io,
        options,
        definition,
        () => `defined connector ${definition.key} (${definition.name}); callback: ${callbackUrl}`,
      );
    });
  });

  withCommon(connector.command('list').description('list system connector definitions')).action(
    async (options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const defs = await app.services.connectors.listSystemDefinitions();
        emit(io, options, defs, () =>
          table(
            defs.map((d) => ({
              key: d.key,
              name: d.name,
              auth: d.authKind,
              adapter: d.adapter,
              configured: d.oauth ? d.oauth.configured : '-',
            })),
            ['key', 'name', 'auth', 'adapter', 'configured'],
          ),
        );
      });
    },
  );
}
