import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { MigrationError } from '../db/migrator.js';
import { DomainError } from '../http/errors.js';
import { UsageError, type CliIo } from './io.js';
import { makeServeCommand } from './serve.js';
import { makeDatabaseCommands } from './database.js';
import { makeUserCommands } from './user.js';
import { makeMailCommands } from './mail.js';
import { makeWalletCommands } from './wallet.js';
import { makeAccountCommands } from './account.js';
import { makeStatusServiceCommands } from './status-service.js';
import { makeStatusComponentCommands } from './status-component.js';
import { makeStatusIncidentCommands } from './status-incident.js';
import { makeStatusMaintenanceCommands } from './status-maintenance.js';
import { makeNotifyCommands } from './notify.js';
import { makeClientCommands } from './client.js';
import { makeConnectorCommands } from './connector.js';
import { makeSecretsCommands } from './secrets.js';
import { makeProviderCommands } from './provider.js';

/** The whole command tree; each group is a factory over the same services as the routes. */
function buildProgram(io: CliIo): Command {
  const program = new Command('gantry')
    .description('Gantry: self-hosted identity, accounts, connectors, AI operations and status')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  makeServeCommand(program, io);
  makeDatabaseCommands(program, io);
  makeUserCommands(program, io);
  makeMailCommands(program, io);
  makeWalletCommands(program, io);
  makeAccountCommands(program, io);
  makeStatusServiceCommands(program, io);
  makeStatusComponentCommands(program, io);
  makeStatusIncidentCommands(program, io);
  makeStatusMaintenanceCommands(program, io);
  makeNotifyCommands(program, io);
  makeClientCommands(program, io);
  makeConnectorCommands(program, io);
  makeSecretsCommands(program, io);
  makeProviderCommands(program, io);
  // Subcommands inherit exitOverride and the output configuration (commander copies them on creation).
  return program;
}

/**
 * Runs one command line and returns the exit code: 0 done, 1 configuration or unexpected
 * failure, 2 a usage mistake or a refused request, 130 interrupted at a prompt.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return 0;
      return 2;
    }
    if ((err as Error).name === 'ExitPromptError') return 130;
    if (err instanceof UsageError) {
      io.err(`gantry: ${err.message}`);
      return 2;
    }
    if (err instanceof DomainError) {
      io.err(`gantry: ${err.message}`);
      return err.status >= 500 ? 1 : 2;
    }
    if (err instanceof ConfigError || err instanceof MigrationError) {
      io.err(`gantry: ${err.message}`);
      return 1;
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      io.err(`gantry: cannot listen: ${(err as Error).message}`);
      return 1;
    }
    io.err(`gantry: unexpected error: ${(err as Error).message}`);
    if (io.env.GANTRY_LOG_LEVEL === 'debug') io.err(String((err as Error).stack));
    return 1;
  }
}
