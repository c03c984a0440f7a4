import type { Command } from 'commander';
import path from 'node:path';
import { withApp } from './context.js';
import { emit, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';

export function makeDatabaseCommands(program: Command, io: CliIo): void {
  withCommon(program.command('migrate').description('apply pending database migrations')).action(
    async (options: CommonOptions) => {
      await withApp(
        io,
        options,
        async (app) => {
          const { applied, current } = app.kernel.migration;
          emit(io, options, { applied, current }, () =>
            applied.length ? `applied ${applied.join(', ')}` : `up to date (${current})`,
          );
        },
        true,
      );
    },
  );

  withCommon(
    program
      .command('backup')
      .argument('<file>', 'where to write the copy')
      .description('copy the database consistently while the server runs (SQLite online backup)'),
  ).action(async (file: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const target = path.resolve(file);
      const { sqlite } = app.kernel;
      // PostgreSQL has its own tools for consistent copies (docs/postgres.md, Operations).
      if (!sqlite) throw new UsageError('gantry backup copies the SQLite file; on PostgreSQL use pg_dump or PITR');
      const progress = await sqlite.backup(target);
      emit(
        io,
        options,
        { file: target, pages: progress.totalPages },
        () => `backup written to ${target} (${progress.totalPages} pages)`,
      );
    });
  });
}
