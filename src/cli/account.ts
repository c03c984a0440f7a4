import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';

const FEATURES = ['ai'];

export function makeAccountCommands(program: Command, io: CliIo): Command {
  const account = program.command('account').description('manage accounts');
  withCommon(
    account
      .command('entitle')
      .argument('<accountId>')
      .description('grant (or with --revoke, take back) a feature entitlement')
      .option('--feature <feature>', `feature: ${FEATURES.join(', ')}`)
      .option('--revoke', 'revoke instead of grant'),
  ).action(async (accountId: string, options: CommonOptions & { feature?: string; revoke?: boolean }) => {
    if (!options.feature) throw new UsageError('missing required option --feature');
    if (!FEATURES.includes(options.feature)) throw new UsageError(`unknown feature "${options.feature}" (known: ${FEATURES.join(', ')})`);
    await withApp(io, options, async (app) => {
      const result = await app.services.accounts.setEntitlement(accountId, options.feature!, !options.revoke);
      emit(io, options, result, () => `${result.granted ? 'granted' : 'revoked'} ${result.feature} for account ${accountId}`);
    });
  });
  return account;
}
