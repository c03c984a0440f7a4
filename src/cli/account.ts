import type { Command } from 'commander';
import type { AppContext } from '../app.js';
import { withApp } from './context.js';
import { emit, required, table, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';
import { ASSIGNABLE_ROLES } from '../accounts/roles.js';
import { OPERATOR } from '../accounts/access.js';
import { assertAssignableRole, assertKnownFeature, ENTITLEMENT_FEATURES } from '../accounts/service.js';

/** A user named by id or by email. */
async function resolveUser(app: AppContext, idOrEmail: string): Promise<string> {
  const { identity } = app.services;
  const user = idOrEmail.includes('@')
    ? await identity.findUserByEmail(idOrEmail.trim().toLowerCase())
    : await identity.findUserById(idOrEmail);
  if (!user) throw new UsageError(`no user "${idOrEmail}"`);
  return user.id;
}

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
      .argument('<accountId>')
      .description("show or set the account's billing customer and seat subscription item (docs/billing.md)")
      .option('--customer <id>', 'Stripe customer id (cus_...); "none" clears it')
      .option('--seat-item <id>', 'Stripe subscription item id of the seats (si_...); "none" clears it'),
  ).action(async (accountId: string, options: CommonOptions & { customer?: string; seatItem?: string }) => {
    const value = (raw: string | undefined) => (raw === undefined ? undefined : raw === 'none' ? null : raw);
    await withApp(io, options, async (app) => {
      const { billing } = app.services;
      const link =
        options.customer === undefined && options.seatItem === undefined
          ? await billing.accountLink(accountId)
          : await billing.linkAccount(accountId, {
              customerId: value(options.customer),
              seatItemId: value(options.seatItem),
            });
      emit(
        io,
        options,
        link,
        () => `${accountId}: customer ${link.customerId ?? '-'}, seat item ${link.seatItemId ?? '-'}`,
      );
    });
  });

  withCommon(account.command('show').argument('<accountId>').description('show an account with its counts')).action(
    async (accountId: string, options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const shown = await app.services.accounts.show(accountId);
        emit(io, options, shown, () =>
          Object.entries(shown)
            .map(([k, v]) => `${k}: ${v ?? '-'}`)
            .join('\n'),
        );
      });
    },
  );

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
      const slug = await required(io, options.slug, { flag: 'slug', message: 'Slug' });
      const legalName = await required(io, options.legalName, { flag: 'legal-name', message: 'Legal name' });
      const owner = await required(io, options.owner, { flag: 'owner', message: 'Owner (user id or email)' });
      await withApp(io, options, async (app) => {
        const created = await app.services.accounts.create(await resolveUser(app, owner), {
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

  for (const [name, status] of [
    ['suspend', 'suspended'],
    ['activate', 'active'],
  ] as const) {
    withCommon(
      account.command(name).argument('<accountId>').description(`${name} an account (PATCH status ${status})`),
    ).action(async (accountId: string, options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const updated = await app.services.accounts.update(OPERATOR, accountId, { status });
        emit(io, options, updated, () => `account ${updated.id} is ${updated.status}`);
      });
    });
  }

  withCommon(
    account
      .command('restore')
      .argument('<accountId>')
      .description('restore a deleted (closed) account within its retention period'),
  ).action(async (accountId: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      await app.services.accounts.deletion.restore(OPERATOR, accountId);
      const shown = await app.services.accounts.show(accountId);
      emit(io, options, shown, () => `account ${shown.id} restored (${shown.status})`);
    });
  });

  withCommon(
    account
      .command('approve-deletion')
      .argument('<accountId>')
      .description('confirm a closed account deletion: no restore, purged by the next retention run'),
  ).action(async (accountId: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const result = await app.services.accounts.deletion.approve(OPERATOR, accountId);
      emit(io, options, result, () => `account ${accountId} deletion approved`);
    });
  });

  withCommon(account.command('purge').description('run the retention job now: hard-delete accounts due')).action(
    async (options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const purged = await app.services.accounts.deletion.purgeDue(app.kernel.clock.now());
        emit(io, options, { purged }, () => (purged.length ? `hard-deleted ${purged.join(', ')}` : 'nothing to purge'));
      });
    },
  );

  withCommon(
    account
      .command('entitle')
      .argument('<accountId>')
      .description('grant (or with --revoke, take back) a feature entitlement')
      .option('--feature <feature>', `feature: ${ENTITLEMENT_FEATURES.join(', ')}`)
      .option('--revoke', 'revoke instead of grant'),
  ).action(async (accountId: string, options: CommonOptions & { feature?: string; revoke?: boolean }) => {
    if (!options.feature) throw new UsageError('missing required option --feature');
    assertKnownFeature(options.feature);
    await withApp(io, options, async (app) => {
      const result = await app.services.accounts.setEntitlement(accountId, options.feature!, !options.revoke);
      emit(
        io,
        options,
        result,
        () => `${result.granted ? 'granted' : 'revoked'} ${result.feature} for account ${accountId}`,
      );
    });
  });

  const member = account.command('member').description("manage an account's members");
  withCommon(
    member
      .command('add')
      .argument('<accountId>')
      .description('add an existing user as an active member')
      .option('--user <user>', 'user id or email')
      .option('--role <role>', `role: ${ASSIGNABLE_ROLES.join(', ')}`, 'member'),
  ).action(async (accountId: string, options: CommonOptions & { user?: string; role: string }) => {
    const user = await required(io, options.user, { flag: 'user', message: 'User (id or email)' });
    const role = options.role;
    assertAssignableRole(role);
    await withApp(io, options, async (app) => {
      const added = await app.services.accounts.members.add(OPERATOR, accountId, {
        chainerId: await resolveUser(app, user),
        role,
      });
      emit(io, options, added, () => `added ${user} to ${accountId} as ${added.role}`);
    });
  });
  withCommon(
    member
      .command('remove')
      .argument('<accountId>')
      .argument('<user>', 'user id or email')
      .description('remove a member: their API keys and workspace memberships in the account end')
      .option('--release-seat', 'release their billing seat'),
  ).action(async (accountId: string, user: string, options: CommonOptions & { releaseSeat?: boolean }) => {
    await withApp(io, options, async (app) => {
      const removed = await app.services.accounts.members.remove(OPERATOR, accountId, await resolveUser(app, user), {
        releaseSeat: options.releaseSeat === true,
      });
      emit(
        io,
        options,
        removed,
        () =>
          `removed ${user} from ${accountId}: ${removed.revokedApiKeys.length} API key(s) revoked, ${removed.removedWorkspaceMemberships} workspace membership(s) removed, seat ${removed.seatRelease.status}`,
      );
    });
  });
  withCommon(member.command('list').argument('<accountId>').description("list an account's members")).action(
    async (accountId: string, options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const { items } = await app.services.accounts.members.list(OPERATOR, accountId, 500, 0);
        emit(io, options, items, () => table(items, ['chainerId', 'email', 'role', 'status', 'joinedAt']));
      });
    },
  );
  return account;
}
