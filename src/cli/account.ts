import type { Command } from 'commander';
import { withApp } from './context.js';
import { fieldOf } from './checks.js';
import { confirmed, withYes, type YesOption } from './confirm.js';
import { emit, required, table, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';
import { makeAccountDeletionCommands } from './account-deletion.js';
import { makeAccountMemberCommands } from './account-members.js';
import { accountRef, namesUser, userRef } from './references.js';
import { OPERATOR } from '../accounts/access.js';
import { createAccountBody } from '../accounts/schemas.js';
import { assertKnownFeature, ENTITLEMENT_FEATURES } from '../accounts/service.js';

/** `gantry account ...`: accounts by id or slug (docs/accounts.md, CLI). */
export function makeAccountCommands(program: Command, io: CliIo): Command {
  const account = program.command('account').description('manage accounts');

  withCommon(
    account
      .command('list')
      .description('list accounts (every status)')
      .option('--status <status>', 'only accounts with this status'),
  ).action(async (options: CommonOptions & { status?: string }) => {
    await withApp(io, options, async (app) => {
      const rows = await app.services.accounts.list({ status: options.status });
      emit(io, options, rows, () => table(rows, ['id', 'slug', 'legalName', 'status', 'createdAt']));
    });
  });

  withCommon(
    account
      .command('billing')
      .argument('<account>', 'account id or slug')
      .description("show or set the account's billing customer and seat subscription item (docs/billing.md)")
      .option('--customer <id>', 'Stripe customer id (cus_...); "none" clears it')
      .option('--seat-item <id>', 'Stripe subscription item id of the seats (si_...); "none" clears it'),
  ).action(async (ref: string, options: CommonOptions & { customer?: string; seatItem?: string }) => {
    const value = (raw: string | undefined) => (raw === undefined ? undefined : raw === 'none' ? null : raw);
    await withApp(io, options, async (app) => {
      const { billing } = app.services;
      const { id } = await accountRef(app, ref);
      const link =
        options.customer === undefined && options.seatItem === undefined
          ? await billing.accountLink(id)
          : await billing.linkAccount(id, { customerId: value(options.customer), seatItemId: value(options.seatItem) });
      emit(io, options, link, () => `${id}: customer ${link.customerId ?? '-'}, seat item ${link.seatItemId ?? '-'}`);
    });
  });

  withCommon(
    account.command('show').argument('<account>', 'account id or slug').description('show an account with its counts'),
  ).action(async (ref: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const shown = await app.services.accounts.show((await accountRef(app, ref)).id);
      emit(io, options, shown, () =>
        Object.entries(shown)
          .map(([k, v]) => `${k}: ${v ?? '-'}`)
          .join('\n'),
      );
    });
  });

  withCommon(
    account
      .command('create')
      .description('create an account (with its default workspace) owned by a user')
      .option('--slug <slug>', 'URL-safe slug, 3-64 characters')
      .option('--legal-name <name>', 'legal or organisation name, 2-180 characters')
      .option('--owner <user>', 'owner: user id or email')
      .option('--display-name <name>', 'display name'),
  ).action(
    async (options: CommonOptions & { slug?: string; legalName?: string; owner?: string; displayName?: string }) => {
      await withApp(io, options, async (app) => {
        const slug = await required(io, options.slug, {
          flag: 'slug',
          message: 'Slug',
          check: fieldOf(createAccountBody, 'slug'),
        });
        const legalName = await required(io, options.legalName, {
          flag: 'legal-name',
          message: 'Legal name',
          check: fieldOf(createAccountBody, 'legalName'),
        });
        const owner = await required(io, options.owner, {
          flag: 'owner',
          message: 'Owner (user id or email)',
          check: namesUser(app),
        });
        const created = await app.services.accounts.create((await userRef(app, owner)).id, {
          slug,
          legalName,
          ...(options.displayName ? { displayName: options.displayName } : {}),
        });
        emit(
          io,
          options,
          created,
          () => `created account ${created.id} (${created.slug}), default workspace ${created.defaultWorkspaceId}`,
        );
      });
    },
  );

  withCommon(
    withYes(
      account
        .command('suspend')
        .argument('<account>', 'account id or slug')
        .description('suspend an account: its workspaces refuse writes until it is activated'),
    ),
  ).action(async (ref: string, options: CommonOptions & YesOption) => {
    await withApp(io, options, async (app) => {
      const target = await accountRef(app, ref);
      if (target.status === 'active') {
        const { memberCount } = await app.services.accounts.show(target.id);
        await confirmed(
          io,
          options,
          `Suspend account ${target.label}? Its ${memberCount} member(s) keep reading, but every write is refused until \`gantry account activate ${target.slug}\`.`,
        );
      }
      const updated = await app.services.accounts.update(OPERATOR, target.id, { status: 'suspended' });
      emit(io, options, updated, () => `account ${updated.id} is ${updated.status}`);
    });
  });

  withCommon(
    account
      .command('activate')
      .argument('<account>', 'account id or slug')
      .description('activate a suspended account (PATCH status active)'),
  ).action(async (ref: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const updated = await app.services.accounts.update(OPERATOR, (await accountRef(app, ref)).id, {
        status: 'active',
      });
      emit(io, options, updated, () => `account ${updated.id} is ${updated.status}`);
    });
  });

  withCommon(
    account
      .command('entitle')
      .argument('<account>', 'account id or slug')
      .description('grant (or with --revoke, take back) a feature entitlement')
      .option('--feature <feature>', `feature: ${ENTITLEMENT_FEATURES.join(', ')}`)
      .option('--revoke', 'revoke instead of grant'),
  ).action(async (ref: string, options: CommonOptions & { feature?: string; revoke?: boolean }) => {
    if (!options.feature) throw new UsageError('missing required option --feature');
    assertKnownFeature(options.feature);
    await withApp(io, options, async (app) => {
      const { id } = await accountRef(app, ref);
      const result = await app.services.accounts.setEntitlement(id, options.feature!, !options.revoke);
      emit(io, options, result, () => `${result.granted ? 'granted' : 'revoked'} ${result.feature} for account ${id}`);
    });
  });

  makeAccountDeletionCommands(account, io);
  makeAccountMemberCommands(account, io);
  return account;
}
