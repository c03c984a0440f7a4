import type { Command } from 'commander';
import { withApp } from './context.js';
import { confirmed, withYes, type YesOption } from './confirm.js';
import { emit, numberOption, withCommon, type CliIo, type CommonOptions } from './io.js';
import { createSecretsRotation } from '../lib/sealed-rotation.js';

/** `gantry secrets rotate`: a new active credential key, every sealed value re-encrypted under it (src/lib/sealed-rotation.ts). */
export function makeSecretsCommands(program: Command, io: CliIo): void {
  const secrets = program.command('secrets').description('secrets and encryption keys');
  withCommon(
    withYes(
      secrets
        .command('rotate')
        .description('new credential key; everything re-encrypted')
        .option('--settle-ms <ms>', 'wait for running servers to reload the keyring', '1500'),
    ),
  ).action(async (options: CommonOptions & YesOption & { settleMs: string }) => {
    const settleMs = numberOption('settle-ms', options.settleMs, { integer: true, min: 0, max: 60_000 }) ?? 0;
    await withApp(io, options, async (app) => {
      const where = app.kernel.secrets.keyEncryptionKey ? 'the database keyring' : 'secrets.json';
      await confirmed(
        io,
        options,
        `Add a new credential key to ${where} and re-encrypt every stored credential under it (the active key is now ${app.kernel.secrets.activeCredentialKeyId})? Running servers reload the keyring; older keys stay, to open older copies such as backups.`,
      );
      const result = await createSecretsRotation(app.kernel, app.services).rotate({ settleMs });
      emit(
        io,
        options,
        result,
        () => `active credential key ${result.activeKeyId}; ${result.total} sealed values re-encrypted`,
      );
    });
  });
}
