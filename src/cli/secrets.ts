import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, numberOption, withCommon, type CliIo, type CommonOptions } from './io.js';
import { resolveConfig } from '../config.js';
import { ensureDataDir } from '../config.js';
import { inTransaction } from '../db/tx.js';
import { loadSecrets } from '../lib/secrets.js';
import { addCredentialKey, resealColumns, type SealedColumn } from '../lib/sealed-rotation.js';
import { CONNECTOR_SEALED_COLUMNS, KEYRING_TOPIC } from '../connectors/rotation.js';

/** Every sealed column of every domain; a domain with secrets at rest adds its list here. */
const SEALED_COLUMNS: readonly SealedColumn[] = [...CONNECTOR_SEALED_COLUMNS];

/**
 * `gantry secrets rotate`: a new credential key becomes active in secrets.json; running
 * servers reload the keyring (change feed) before anything is re-sealed under it; then every
 * sealed value is re-encrypted under the new key. Old keys stay in the file.
 */
export function makeSecretsCommands(program: Command, io: CliIo): void {
  const secrets = program.command('secrets').description('secrets and encryption keys');
  withCommon(secrets.command('rotate').description('new credential key; everything re-encrypted').option('--settle-ms <ms>', 'wait for running servers to reload the keyring', '1500')).action(
    async (options: CommonOptions & { settleMs: string }) => {
      const settle = numberOption('settle-ms', options.settleMs, { integer: true, min: 0, max: 60_000 }) ?? 0;
      const config = resolveConfig({ dataDir: options.dataDir }, io.env);
      ensureDataDir(config);
      loadSecrets(config.dataDir, io.env);
      const { keyId } = addCredentialKey(config.dataDir);
      await withApp(io, options, async (app) => {
        await inTransaction(app.kernel.db, (trx) => app.kernel.changes.publish(trx, KEYRING_TOPIC, keyId));
        if (settle > 0) await new Promise((resolve) => setTimeout(resolve, settle));
        const counts = await resealColumns(app.kernel.db, app.kernel.secrets, SEALED_COLUMNS);
        // Provider keys carry their key id in a column of their own: the AI domain re-seals them.
        counts['ai_providers.api_key_sealed'] = await app.services.ai.admin.resealKeys();
        const total = Object.values(counts).reduce((a, b) => a + b, 0);
        emit(io, options, { activeKeyId: keyId, resealed: counts, total }, () => `active credential key ${keyId}; ${total} sealed values re-encrypted`);
      });
    },
  );
}
