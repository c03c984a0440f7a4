import { Command, CommanderError } from 'commander';
import type { CliIo } from './io.js';
import { refuseMissingDataDir } from './context.js';
import { describeFailure } from './failure.js';
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
import { makeStatusSubscriberCommands } from './status-subscribers.js';
import { makeNotifyCommands } from './notify.js';
import { makeClientCommands } from './client.js';
import { makeConnectorCommands } from './connector.js';
import { makeSecretsCommands } from './secrets.js';
import { makeProviderCommands } from './provider.js';
import { makeIdpCommands } from './idp.js';

/** The whole command tree; each group is a factory over the same services as the routes. */
function buildProgram(io: CliIo): Command {
  const program = new Command('gantry')
    .description('Gantry: self-hosted identity, accounts, connectors, AI operations and status')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .hook('preAction', (_program, command) => refuseMissingDataDir(io, command));
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
  makeStatusSubscriberCommands(program, io);
  makeNotifyCommands(program, io);
  makeClientCommands(program, io);
  makeConnectorCommands(program, io);
  makeSecretsCommands(program, io);
  makeProviderCommands(program, io);
  makeIdpCommands(program, io);
  // Subcommands inherit exitOverride and the output configuration (commander copies them on creation).
  return program;
}

/** Whether the command line asks for JSON (options end at `--`). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * Runs one command line and returns the exit code: 0 done, 1 configuration or unexpected
 * failure (or a confirmation answered no), 2 a usage mistake or a refused request, 130
 * interrupted at a prompt. A failure is one line on stderr; with --json also exactly one
 * document `{"error": {"code", "message"}}` on stdout (codes: src/cli/failure.ts).
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (
      err instanceof CommanderError &&
      (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
    )
      return 0;
    const failure = describeFailure(err);
    if (!failure.printed) io.err(`gantry: ${failure.message}`);
    if (failure.code === 'INTERNAL' && io.env.GANTRY_LOG_LEVEL === 'debug') io.err(String((err as Error).stack));
    if (wantsJson(argv)) io.out(JSON.stringify({ error: { code: failure.code, message: failure.message } }));
    return failure.exitCode;
  }
}
