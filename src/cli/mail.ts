import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, numberOption, withCommon, type CliIo, type CommonOptions } from './io.js';

export function makeMailCommands(program: Command, io: CliIo): void {
  const mail = program.command('mail').description('outgoing mail');
  withCommon(
    mail.command('list').description('the outbox, newest first').option('--limit <n>', 'how many', '20'),
  ).action(async (options: CommonOptions & { limit: string }) => {
    await withApp(io, options, async (app) => {
      const entries = await app.kernel.mailer.list(
        numberOption('limit', options.limit, { integer: true, min: 1, max: 500 }) ?? 20,
      );
      emit(io, options, entries, () =>
        entries.length === 0
          ? '(outbox empty)'
          : entries
              .map(
                (m) =>
                  `--- ${m.createdAt} ${m.kind} to ${m.to}${m.sentAt ? ' (sent)' : ''}\nSubject: ${m.subject}\n\n${m.text}`,
              )
              .join('\n\n'),
      );
    });
  });
}
