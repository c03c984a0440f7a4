import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, withCommon, type CliIo, type CommonOptions } from './io.js';

export function makeWalletCommands(program: Command, io: CliIo): void {
  const wallet = program.command('wallet').description('user wallets');
  withCommon(
    wallet
      .command('credit')
      .argument('<userId>')
      .argument('<amount>', 'amount in USD')
      .description("add funds to a user's wallet"),
  ).action(async (userId: string, amountText: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      // The service owns the amount rule; a refused amount comes back as a 400 (exit 2).
      const result = await app.services.wallet.credit(userId, Number(amountText), 'operator_credit');
      emit(io, options, { userId, ...result }, () => `wallet of ${userId}: ${result.balance} ${result.currency}`);
    });
  });
}
