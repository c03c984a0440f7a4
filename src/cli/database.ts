import type { Command } from 'commander';
import { existsSync, linkSync, realpathSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { withApp } from './context.js';
import { emit, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';

/** Whether `target` is the live database or one of its companion files (WAL, shared memory). */
function isLiveDatabase(target: string, dbFile: string): boolean {
  const real = (file: string) => (existsSync(file) ? realpathSync(file) : path.resolve(file));
  const live = real(dbFile);
  return [live, `${live}-wal`, `${live}-shm`, `${live}-journal`].includes(real(target));
}

/**
 * Puts the finished copy in place: beside the target first, so a failed or interrupted backup
 * never leaves half a file under the target's name, nor harms the copy it was to replace.
 * Without --force the target must still not exist (a hard link refuses to replace; where the
 * filesystem has none, a last check then a rename).
 */
function putInPlace(partial: string, target: string, force: boolean): void {
  if (force) return renameSync(partial, target);
  try {
    linkSync(partial, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST' || existsSync(target)) throw exists(target);
    renameSync(partial, target);
  }
}

const exists = (target: string) =>
  new UsageError(`${target} already exists; pass --force to replace it (it was left untouched)`);

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
      .description('copy the database consistently while the server runs (SQLite online backup)')
      .option('--force', 'replace FILE when it already exists'),
  ).action(async (file: string, options: CommonOptions & { force?: boolean }) => {
    await withApp(io, options, async (app) => {
      const target = path.resolve(file);
      const { sqlite, config } = app.kernel;
      // PostgreSQL has its own tools for consistent copies (docs/postgres.md, Operations).
      if (!sqlite) throw new UsageError('gantry backup copies the SQLite file; on PostgreSQL use pg_dump or PITR');
      if (isLiveDatabase(target, config.dbFile))
        throw new UsageError(`${target} is the live database; write the backup elsewhere`);
      if (existsSync(target) && !options.force) throw exists(target);
      if (!existsSync(path.dirname(target))) throw new UsageError(`directory ${path.dirname(target)} does not exist`);
      const partial = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.partial`);
      try {
        const progress = await sqlite.backup(partial);
        putInPlace(partial, target, options.force === true);
        emit(
          io,
          options,
          { file: target, pages: progress.totalPages },
          () => `backup written to ${target} (${progress.totalPages} pages)`,
        );
      } finally {
        rmSync(partial, { force: true });
      }
    });
  });
}
