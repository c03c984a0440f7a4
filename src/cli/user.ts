import type { Command } from 'commander';
import { withApp } from './context.js';
import { fieldOf } from './checks.js';
import { emit, required, withCommon, type CliIo, type CommonOptions } from './io.js';
import { newUserRules } from '../identity/schemas.js';

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
}
