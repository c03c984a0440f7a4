import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, table, withCommon, type CliIo, type CommonOptions } from './io.js';
import { userRef } from './references.js';

export function makeWalletCommands(program: Command, io: CliIo): void {
  const wallet = program.command('wallet').description('user wallets');
  withCommon(
    wallet
      .command('credit')
      .argument('<user>', 'user id or email')
      .argument('<amount>', 'amount in USD')
      .description("add funds to a user's wallet"),
  ).action(async (ref: string, amountText: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const { id: userId } = await userRef(app, ref);
      // The service owns the amount rule; a refused amount comes back as a 400 (exit 2).
      const result = await app.services.wallet.credit(userId, Number(amountText), 'operator_credit');
      emit(io, options, { userId, ...result }, () => `wallet of ${userId}: ${result.balance} ${result.currency}`);
    });
  });
  withCommon(
    wallet
      .command('show')
      .argument('<user>', 'user id or email')
      .description("show a user's balance and newest ledger rows"),
  ).action(async (ref: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const { id: userId } = await userRef(app, ref);
      const shown = await app.services.wallet.show(userId);
      emit(io, options, shown, () =>
        [
          `wallet of ${userId}: ${shown.balance} ${shown.currency}`,
          shown.ledger.length === 0
            ? '(no ledger rows)'
            : table(shown.ledger, ['createdAt', 'amount', 'reason', 'reference']),
        ].join('\n'),
      );
    });
  });
}
