import type { Command } from 'commander';
import { withApp } from './context.js';
import { confirmed, withYes, type YesOption } from './confirm.js';
import { emit, required, table, withCommon, type CliIo, type CommonOptions } from './io.js';
import { accountRef, namesUser, userRef } from './references.js';
import { OPERATOR } from '../accounts/access.js';
import { ASSIGNABLE_ROLES } from '../accounts/roles.js';
import { assertAssignableRole } from '../accounts/service.js';

/** `gantry account member add|remove|list`: members by user id or email, accounts by id or slug. */
export function makeAccountMemberCommands(account: Command, io: CliIo): void {
  const member = account.command('member').description("manage an account's members");
  withCommon(
    member
      .command('add')
      .argument('<account>', 'account id or slug')
      .description('add an existing user as an active member')
      .option('--user <user>', 'user id or email')
      .option('--role <role>', `role: ${ASSIGNABLE_ROLES.join(', ')}`, 'member'),
  ).action(async (ref: string, options: CommonOptions & { user?: string; role: string }) => {
    const role = options.role;
    assertAssignableRole(role);
    await withApp(io, options, async (app) => {
      const target = await accountRef(app, ref);
      const answer = await required(io, options.user, {
        flag: 'user',
        message: 'User (id or email)',
        check: namesUser(app),
      });
      const user = await userRef(app, answer);
      const added = await app.services.accounts.members.add(OPERATOR, target.id, { chainerId: user.id, role });
      emit(io, options, added, () => `added ${user.email} to ${target.slug} as ${added.role}`);
    });
  });

  withCommon(
    withYes(
      member
        .command('remove')
        .argument('<account>', 'account id or slug')
        .argument('<user>', 'user id or email')
        .description('remove a member: their API keys and workspace memberships in the account end')
        .option('--release-seat', 'release their billing seat'),
    ),
  ).action(async (ref: string, userText: string, options: CommonOptions & YesOption & { releaseSeat?: boolean }) => {
    await withApp(io, options, async (app) => {
      const { members } = app.services.accounts;
      const target = await accountRef(app, ref);
      const user = await userRef(app, userText);
      const { role } = await members.get(target.id, user.id);
      await confirmed(
        io,
        options,
        `Remove ${user.label}, ${role} of account ${target.label}? Their API keys in the account are revoked and their workspace memberships end${options.releaseSeat ? '; their billing seat is released' : ''}.`,
      );
      const removed = await members.remove(OPERATOR, target.id, user.id, { releaseSeat: options.releaseSeat === true });
      emit(
        io,
        options,
        removed,
        () =>
          `removed ${user.email} from ${target.slug}: ${removed.revokedApiKeys.length} API key(s) revoked, ${removed.removedWorkspaceMemberships} workspace membership(s) removed, seat ${removed.seatRelease.status}`,
      );
    });
  });

  withCommon(
    member.command('list').argument('<account>', 'account id or slug').description("list an account's members"),
  ).action(async (ref: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const { items } = await app.services.accounts.members.list(OPERATOR, (await accountRef(app, ref)).id, 500, 0);
      emit(io, options, items, () => table(items, ['chainerId', 'email', 'role', 'status', 'joinedAt']));
    });
  });
}
