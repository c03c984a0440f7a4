import type { Command } from 'commander';
import { withApp } from './context.js';
import { fieldOf } from './checks.js';
import { emit, required, withCommon, type CliIo, type CommonOptions } from './io.js';
import { newUserRules } from '../identity/schemas.js';
import { confirmed, withYes, type YesOption } from './confirm.js';
import { userRef } from './references.js';

export function makeUserCommands(program: Command, io: CliIo): void {
  const user = program.command('user').description('manage users');
  withCommon(
    user
      .command('create')
      .description('create a user who can sign in')
      .option('--email <email>', 'sign-in email')
      .option('--password <password>', 'password (8 or more characters)')
      .option('--name <name>', 'full name')
      .option('--username <username>', 'username')
      .option('--verified', 'mark the email as confirmed'),
  ).action(
    async (
      options: CommonOptions & {
        email?: string;
        password?: string;
        name?: string;
        username?: string;
        verified?: boolean;
      },
    ) => {
      const email = await required(io, options.email, {
        flag: 'email',
        message: 'Email',
        check: fieldOf(newUserRules, 'email'),
      });
      const password = await required(io, options.password, {
        flag: 'password',
        message: 'Password',
        kind: 'password',
        check: fieldOf(newUserRules, 'password'),
      });
      await withApp(io, options, async (app) => {
        const created = await app.services.identity.createUser({
          email,
          password,
          fullName: options.name,
          username: options.username,
          verified: options.verified,
        });
        const shown = app.services.identity.presentUser(created);
        emit(io, options, shown, () => `created user ${shown.id} <${shown.email}>`);
      });
    },
  );

  withCommon(
    withYes(
      user
        .command('reset-second-factors')
        .argument('<user>', 'user id or email')
        .description(
          'for a user who lost their device and recovery codes: remove two-step sign-in and every passkey, end their sessions and app grants (docs/identity.md)',
        ),
    ),
  ).action(async (ref: string, options: CommonOptions & YesOption) => {
    await withApp(io, options, async (app) => {
      const target = await userRef(app, ref);
      await confirmed(
        io,
        options,
        `Remove two-step sign-in and every passkey of ${target.label}, and sign out all their sessions and apps? They sign in again with their password or a sign-in link.`,
      );
      const removed = await app.services.identity.resetSecondFactors(target.id);
      emit(
        io,
        options,
        { userId: target.id, ...removed },
        () =>
          `reset ${target.label}: two-step sign-in ${removed.twoStep ? 'removed' : 'was off'}, ${removed.passkeys} passkey(s) and ${removed.recoveryCodes} recovery code(s) removed, ${removed.endedSessions} session(s) ended`,
      );
    });
  });
}
