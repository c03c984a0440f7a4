import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';

export function makeWalletCommands(program: Command, io: CliIo): void {
  const wallet = program.command('wallet').description('user wallets');
  withCommon(wallet.command('credit').argument('<userId>').argument('<amount>', 'amount in USD').description("add funds to a user's wallet")).action(
    async (userId: string, amountText: string, options: CommonOptions) => {
      const amount = Number(amountText);
      if (!Number.isFinite(amount) || amount <= 0) throw new UsageError('amount must be a positive number');
      await withApp(io, options, async (app) => {
        const result = await app.services.wallet.credit(userId, amount, 'operator_credit');
        emit(io, options, { userId, ...result }, () => `wallet of ${userId}: ${result.balance} ${result.currency}`);
      });
    },
  );
}
