import type { Command } from 'commander';
import { withApp } from './context.js';
import { confirmed, withYes, type YesOption } from './confirm.js';
import { emit, required, table, withCommon, type CliIo, type CommonOptions } from './io.js';

type AddOptions = CommonOptions & {
  name?: string;
  issuer?: string;
  clientId?: string;
  clientSecret?: string;
  domain?: string[];
  account?: string;
  workspace?: string;
};

/** `gantry idp ...`: enterprise identity providers for SSO and ID-JAG (docs/identity-providers.md). */
export function makeIdpCommands(program: Command, io: CliIo): void {
  const idp = program.command('idp').description('enterprise identity providers (OpenID Connect SSO and ID-JAG)');

  withCommon(
    idp
      .command('add')
      .description('add an OpenID provider (discovered from its issuer); register {public}/auth/sso/callback at it')
      .option('--name <name>', 'the name on the sign-in page ("Continue with NAME")')
      .option('--issuer <url>', 'the OpenID issuer (https)')
      .option('--client-id <id>', "Gantry's client id at the provider")
      .option('--client-secret <secret>', "Gantry's client secret at the provider (stored sealed)")
      .option('--domain <domain...>', 'email domains that sign in through it (and whose local users it may link)')
      .option('--account <accountId>', 'the account its new users join as members')
      .option(
        '--workspace <workspaceId>',
        "the workspace of --account its ID-JAG tokens are bound to (default: each user's default workspace)",
      ),
  ).action(async (options: AddOptions) => {
    const name = await required(io, options.name, { flag: 'name', message: 'Name on the sign-in page' });
    const issuer = await required(io, options.issuer, { flag: 'issuer', message: 'Issuer URL' });
    const clientId = await required(io, options.clientId, { flag: 'client-id', message: 'Client id' });
    const clientSecret = await required(io, options.clientSecret, {
      flag: 'client-secret',
      message: 'Client secret',
      kind: 'password',
    });
    await withApp(io, options, async (app) => {
      const added = await app.services.idp.add({
        name,
        issuer,
        clientId,
        clientSecret,
        domains: options.domain ?? [],
        accountId: options.account ?? null,
        workspaceId: options.workspace ?? null,
      });
      const redirectUri = `${app.kernel.config.publicUrl}/auth/sso/callback`;
      emit(io, options, { ...added, redirectUri }, () =>
        [
          `added identity provider "${added.name}" (${added.id})`,
          `issuer:       ${added.issuer}`,
          `domains:      ${added.domains.join(' ') || '(none)'}`,
          `account:      ${added.accountId ?? '(none)'}`,
          `workspace:    ${added.workspaceId ?? "(each user's default workspace)"}`,
          `redirect URI: ${redirectUri} (register it at the provider)`,
        ].join('\n'),
      );
    });
  });

  withCommon(idp.command('list').description('list identity providers (never their secrets)')).action(
    async (options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const idps = await app.services.idp.list();
        emit(io, options, idps, () =>
          table(
            idps.map((i) => ({
              ...i,
              domains: i.domains.join(' '),
              accountId: i.accountId ?? '',
              workspaceId: i.workspaceId ?? '',
            })),
            ['id', 'name', 'issuer', 'clientId', 'domains', 'accountId', 'workspaceId'],
          ),
        );
      });
    },
  );

  withCommon(
    withYes(
      idp
        .command('remove')
        .argument('<idp>', 'identity provider id or name')
        .description('remove an identity provider; its sign-in sessions and ID-JAG grants end at once'),
    ),
  ).action(async (ref: string, options: CommonOptions & YesOption) => {
    await withApp(io, options, async (app) => {
      const target = await app.services.idp.find(ref);
      await confirmed(
        io,
        options,
        `Remove identity provider "${target.name}"? Every session signed in through it and every token its ID-JAGs granted stop working at once.`,
      );
      const removed = await app.services.idp.remove(target.id);
      emit(
        io,
        options,
        removed,
        () =>
          `removed identity provider "${removed.name}"; ${removed.revokedSessions} session(s) and ${removed.revokedGrants} grant(s) revoked, ${removed.unlinkedUsers} user link(s) removed`,
      );
    });
  });
}
