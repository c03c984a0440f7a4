import type { Command } from 'commander';
import { withApp } from './context.js';
import { confirmed, withYes, type YesOption } from './confirm.js';
import { emit, required, requiredList, table, withCommon, type CliIo, type CommonOptions } from './io.js';
import { clientRef } from './references.js';
import { CLIENT_TYPES } from '../oauth/types.js';
import { redirectUriProblem } from '../oauth/redirect-uris.js';
import { isScope, SCOPE_NAMES } from '../oauth/scopes.js';

type CreateOptions = CommonOptions & { name?: string; type?: string; redirectUri?: string[]; scope?: string[] };

/** `gantry client ...`: OAuth clients for partner applications (docs/oauth.md). */
export function makeClientCommands(program: Command, io: CliIo): void {
  const client = program.command('client').description('OAuth clients of third-party applications');

  withCommon(
    client
      .command('create')
      .description('register an OAuth client; a confidential client gets a secret, shown once')
      .option('--name <name>', 'application name shown on the consent page')
      .option('--type <type>', 'confidential or public')
      .option('--redirect-uri <uri...>', 'exact redirect URIs (https, or http on a loopback host)')
      .option('--scope <scope...>', `allowed scopes: ${SCOPE_NAMES.join(' ')}`),
  ).action(async (options: CreateOptions) => {
    const name = await required(io, options.name, { flag: 'name', message: 'Application name' });
    const type = await required(io, options.type, {
      flag: 'type',
      message: 'Client type',
      kind: 'select',
      choices: CLIENT_TYPES,
    });
    const redirectUris = await requiredList(io, options.redirectUri, {
      flag: 'redirect-uri',
      message: 'Redirect URIs (space or comma separated)',
      check: (uri) => redirectUriProblem(uri),
    });
    const scopes = await requiredList(io, options.scope, {
      flag: 'scope',
      message: `Scopes (${SCOPE_NAMES.join(' ')})`,
      check: (scope) => (isScope(scope) ? null : `unknown scope; allowed: ${SCOPE_NAMES.join(' ')}`),
    });
    await withApp(io, options, async (app) => {
      const created = await app.services.oauth.clients.create({ name, type, redirectUris, scopes });
      emit(io, options, created, () =>
        [
          `created ${created.type} client "${created.name}"`,
          `client id:     ${created.clientId}`,
          ...(created.clientSecret
            ? [`client secret: ${created.clientSecret}`, 'Store the secret now: it is not shown again.']
            : ['public client: no secret (PKCE only)']),
          `redirect URIs: ${created.redirectUris.join(' ')}`,
          `scopes:        ${created.scopes.join(' ')}`,
        ].join('\n'),
      );
    });
  });

  withCommon(client.command('list').description('list OAuth clients, self-registered ones included')).action(
    async (options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const clients = await app.services.oauth.clients.list();
        emit(io, options, clients, () =>
          table(
            clients.map((c) => ({
              id: c.clientId,
              name: c.name,
              type: c.type,
              registration: c.registration,
              scopes: c.scopes.join(' '),
              redirectUris: c.redirectUris.join(' '),
            })),
            ['id', 'name', 'type', 'registration', 'scopes', 'redirectUris'],
          ),
        );
      });
    },
  );

  withCommon(
    client
      .command('show')
      .argument('<client>', 'client id or name')
      .description('show one OAuth client (never its secret)'),
  ).action(async (ref: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const shown = await app.services.oauth.clients.show((await clientRef(app, ref)).clientId);
      emit(io, options, shown, () =>
        [
          `client id:     ${shown.clientId}`,
          `name:          ${shown.name}`,
          `type:          ${shown.type}`,
          `registration:  ${shown.registration}`,
          `redirect URIs: ${shown.redirectUris.join(' ')}`,
          `scopes:        ${shown.scopes.join(' ')}`,
          `created:       ${shown.createdAt}`,
        ].join('\n'),
      );
    });
  });

  withCommon(
    withYes(
      client
        .command('rotate-secret')
        .argument('<client>', 'client id or name')
        .description('replace the secret of a confidential client; the old one stops working at once'),
    ),
  ).action(async (ref: string, options: CommonOptions & YesOption) => {
    await withApp(io, options, async (app) => {
      const target = await clientRef(app, ref);
      // A public client has no secret to replace: nothing to ask, the service refuses it.
      if (target.type === 'confidential')
        await confirmed(
          io,
          options,
          `Replace the secret of client ${target.label}? The current secret stops working at once.`,
        );
      const rotated = await app.services.oauth.clients.rotateSecret(target.clientId);
      emit(io, options, rotated, () =>
        [
          `new secret for ${rotated.clientId}: ${rotated.clientSecret}`,
          'Store the secret now: it is not shown again.',
        ].join('\n'),
      );
    });
  });

  withCommon(
    withYes(
      client
        .command('delete')
        .argument('<client>', 'client id or name')
        .description('delete a client and revoke every grant and token issued to it'),
    ),
  ).action(async (ref: string, options: CommonOptions & YesOption) => {
    await withApp(io, options, async (app) => {
      const { clients } = app.services.oauth;
      const target = await clientRef(app, ref);
      const grants = await clients.liveGrantCount(target.clientId);
      await confirmed(
        io,
        options,
        `Delete client ${target.label} and revoke its ${grants} grant(s)? Every token issued to it stops working.`,
      );
      const removed = await clients.remove(target.clientId);
      emit(io, options, removed, () => `deleted client ${removed.clientId}; ${removed.revokedGrants} grant(s) revoked`);
    });
  });
}
