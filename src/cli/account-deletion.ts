import type { Command } from 'commander';
import { withApp } from './context.js';
import { confirmed, withYes, type YesOption } from './confirm.js';
import { emit, withCommon, type CliIo, type CommonOptions } from './io.js';
import { accountRef } from './references.js';
import { OPERATOR } from '../accounts/access.js';

/** `gantry account restore|approve-deletion|purge`: the operator's end of account deletion (docs/accounts.md). */
export function makeAccountDeletionCommands(account: Command, io: CliIo): void {
  withCommon(
    account
      .command('restore')
      .argument('<account>', 'account id or slug')
      .description('restore a deleted (closed) account within its retention period'),
  ).action(async (ref: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const { id } = await accountRef(app, ref);
      await app.services.accounts.deletion.restore(OPERATOR, id);
      const shown = await app.services.accounts.show(id);
      emit(io, options, shown, () => `account ${shown.id} restored (${shown.status})`);
    });
  });

  withCommon(
    withYes(
      account
        .command('approve-deletion')
        .argument('<account>', 'account id or slug')
        .description('confirm a closed account deletion: no restore, purged by the next retention run'),
    ),
  ).action(async (ref: string, options: CommonOptions & YesOption) => {
    await withApp(io, options, async (app) => {
      const target = await accountRef(app, ref);
      // Only a closed account can be approved: anything else is refused by the service, unasked.
      if (target.status === 'closed')
        await confirmed(
          io,
          options,
          `Approve the deletion of account ${target.label}? It can no longer be restored, and the next retention run (or \`gantry account purge\`) erases its members, workspaces and keys.`,
        );
      const result = await app.services.accounts.deletion.approve(OPERATOR, target.id);
      emit(io, options, result, () => `account ${target.id} deletion approved`);
    });
  });

  withCommon(
    withYes(account.command('purge').description('run the retention job now: hard-delete accounts due')),
  ).action(async (options: CommonOptions & YesOption) => {
    await withApp(io, options, async (app) => {
      const { deletion } = app.services.accounts;
      const now = app.kernel.clock.now();
      const due = await deletion.dueForPurge(now);
      if (due.length > 0)
        await confirmed(
          io,
          options,
          `Hard-delete ${due.length} account(s) now: ${due.map((a) => `'${a.slug}' (id ${a.id}, ${a.status})`).join(', ')}? Their members, workspaces, keys and personal fields are erased for good.`,
        );
      // Exactly the accounts shown: one that fell due while the question was open waits for the job.
      const purged = await deletion.purgeDue(
        now,
        due.map((a) => a.id),
      );
      emit(io, options, { purged }, () => (purged.length ? `hard-deleted ${purged.join(', ')}` : 'nothing to purge'));
    });
  });
}
