import type { Command } from 'commander';
import { DomainError } from '../http/errors.js';
import { NOTIFICATION_PRIORITIES, type NotificationPriority } from '../notifications/service.js';
import { withApp } from './context.js';
import { emit, required, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';
import { accountRef, namesUser, userRef } from './references.js';

interface NotifyOptions extends CommonOptions {
  user?: string;
  account?: string;
  title?: string;
  body?: string;
  category?: string;
  priority?: string;
  actionUrl?: string;
  icon?: string;
  expiresAt?: string;
}

/** `gantry notify`: an operator's in-app notification to one user or every active member of an account. */
export function makeNotifyCommands(program: Command, io: CliIo): void {
  withCommon(
    program
      .command('notify')
      .description('send an in-app notification to a user (--user) or to every active member of an account (--account)')
      .option('--user <user>', 'recipient: user id or email')
      .option('--account <account>', 'notify every active member of this account (id or slug) instead')
      .option('--title <title>', 'title')
      .option('--body <body>', 'body text')
      .option('--category <category>', 'category (default system)')
      .option('--priority <priority>', `priority: ${NOTIFICATION_PRIORITIES.join(', ')} (default normal)`)
      .option('--action-url <url>', 'deep link (http(s) URL or /path)')
      .option('--icon <icon>', 'icon identifier')
      .option('--expires-at <iso>', 'hide the notification after this time (ISO 8601)'),
  ).action(async (options: NotifyOptions) => {
    if (options.user && options.account) throw new UsageError('use either --user or --account, not both');
    let expiresAt: Date | null = null;
    if (options.expiresAt !== undefined) {
      expiresAt = new Date(options.expiresAt);
      if (Number.isNaN(expiresAt.getTime())) throw new UsageError('--expires-at must be an ISO 8601 time');
    }
    await withApp(io, options, async (app) => {
      const { notifications, accounts } = app.services;
      const recipient = options.account
        ? undefined
        : await required(io, options.user, {
            flag: 'user',
            message: 'Recipient (user id or email)',
            check: namesUser(app),
          });
      const title = await required(io, options.title, { flag: 'title', message: 'Title' });
      const body = await required(io, options.body, { flag: 'body', message: 'Body' });
      const input = {
        title,
        body,
        category: options.category,
        priority: options.priority as NotificationPriority | undefined,
        actionUrl: options.actionUrl ?? null,
        icon: options.icon ?? null,
        expiresAt,
      };
      if (options.account) {
        const account = await accountRef(app, options.account);
        const members = await accounts.access.activeMemberIds(account.id);
        if (!members) throw new DomainError('NOT_FOUND', `Account not found: ${account.label} is ${account.status}`);
        const created = await notifications.notifyUsers(members, input);
        emit(
          io,
          options,
          { accountId: account.id, notified: created.length, notifications: created },
          () => `notified ${created.length} member(s) of account ${account.slug}`,
        );
        return;
      }
      const [created] = await notifications.notifyUsers([(await userRef(app, recipient!)).id], input);
      emit(
        io,
        options,
        { id: created.id, userId: created.userId },
        () => `notification ${created.id} sent to user ${created.userId}`,
      );
    });
  });
}
