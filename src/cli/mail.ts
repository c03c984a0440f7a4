import type { Command } from 'commander';
import type { OutboxEntry } from '../lib/mailer.js';
import { withApp } from './context.js';
import { emit, numberOption, withCommon, type CliIo, type CommonOptions } from './io.js';

/** One mail as the operator reads it: where it went, its subject and extra headers, its text. */
const shown = (m: OutboxEntry): string =>
  [
    `--- ${m.createdAt} ${m.kind} to ${m.to}${m.sentAt ? ' (sent)' : ''}`,
    `Subject: ${m.subject}`,
    ...Object.entries(m.headers).map(([name, value]) => `${name}: ${value}`),
    '',
    m.text,
  ].join('\n');

export function makeMailCommands(program: Command, io: CliIo): void {
  const mail = program.command('mail').description('outgoing mail');
  withCommon(
    mail.command('list').description('the outbox, newest first').option('--limit <n>', 'how many', '20'),
  ).action(async (options: CommonOptions & { limit: string }) => {
    await withApp(io, options, async (app) => {
      const entries = await app.kernel.mailer.list(
        numberOption('limit', options.limit, { integer: true, min: 1, max: 500 }) ?? 20,
      );
      emit(io, options, entries, () => (entries.length === 0 ? '(outbox empty)' : entries.map(shown).join('\n\n')));
    });
  });
}
