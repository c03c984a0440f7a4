import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, numberOption, required, table, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';
import type { ServiceRow } from '../status/store.js';

const showService = (s: ServiceRow) => ({ ...s, is_public: s.is_public === 1 });

/** The services of the status page (docs/status.md). */
export function makeStatusServiceCommands(program: Command, io: CliIo): void {
  const service = program.command('service').description('status page services');
  withCommon(
    service
      .command('create')
      .description('define a service shown on the status page')
      .option('--slug <slug>', 'service slug')
      .option('--name <name>', 'display name')
      .option('--description <text>', 'description')
      .option('--sort-order <n>', 'position on the page (ascending)')
      .option('--private', 'keep it off the public status service'),
  ).action(
    async (
      options: CommonOptions & {
        slug?: string;
        name?: string;
        description?: string;
        sortOrder?: string;
        private?: boolean;
      },
    ) => {
      const slug = await required(io, options.slug, { flag: 'slug', message: 'Slug' });
      const name = await required(io, options.name, { flag: 'name', message: 'Name' });
      const sortOrder = numberOption('sort-order', options.sortOrder, { integer: true });
      await withApp(io, options, async (app) => {
        const row = showService(
          await app.services.status.createService({
            slug,
            name,
            description: options.description,
            sortOrder,
            isPublic: !options.private,
          }),
        );
        emit(io, options, row, () => `created service ${row.slug} (${row.id})`);
      });
    },
  );
  withCommon(
    service
      .command('update')
      .argument('<slug>')
      .description('change a service')
      .option('--name <name>', 'display name')
      .option('--description <text>', 'description')
      .option('--sort-order <n>', 'position on the page')
      .option('--public', 'show it on the public status service')
      .option('--private', 'hide it from the public status service'),
  ).action(
    async (
      slug: string,
      options: CommonOptions & {
        name?: string;
        description?: string;
        sortOrder?: string;
        public?: boolean;
        private?: boolean;
      },
    ) => {
      if (options.public && options.private) throw new UsageError('--public and --private exclude each other');
      const sortOrder = numberOption('sort-order', options.sortOrder, { integer: true });
      await withApp(io, options, async (app) => {
        const row = showService(
          await app.services.status.updateService(slug, {
            name: options.name,
            description: options.description,
            sortOrder,
            isPublic: options.public ? true : options.private ? false : undefined,
          }),
        );
        emit(io, options, row, () => `updated service ${row.slug}`);
      });
    },
  );
  withCommon(service.command('list').description('every service, public or not')).action(
    async (options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const rows = (await app.services.status.listServices()).map(showService);
        emit(io, options, rows, () => table(rows, ['slug', 'name', 'sort_order', 'is_public', 'id']));
      });
    },
  );
}
