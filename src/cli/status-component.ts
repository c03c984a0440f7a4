import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, numberOption, required, table, withCommon, type CliIo, type CommonOptions } from './io.js';
import { COMPONENT_STATUSES } from '../status/rules.js';
import type { ComponentRow } from '../status/store.js';

/** The components of the status page's services and their current status (docs/status.md). */
export function makeStatusComponentCommands(program: Command, io: CliIo): void {
  const component = program.command('component').description('status page components');
  withCommon(
    component
      .command('create')
      .description('add a component to a service')
      .option('--service <slug>', 'service slug')
      .option('--slug <slug>', 'component slug')
      .option('--name <name>', 'display name')
      .option('--sort-order <n>', 'position within the service')
      .option('--status <status>', `initial status (${COMPONENT_STATUSES.join(', ')})`),
  ).action(
    async (
      options: CommonOptions & { service?: string; slug?: string; name?: string; sortOrder?: string; status?: string },
    ) => {
      const serviceSlug = await required(io, options.service, { flag: 'service', message: 'Service slug' });
      const slug = await required(io, options.slug, { flag: 'slug', message: 'Slug' });
      const name = await required(io, options.name, { flag: 'name', message: 'Name' });
      const sortOrder = numberOption('sort-order', options.sortOrder, { integer: true });
      await withApp(io, options, async (app) => {
        const row = await app.services.status.createComponent({
          serviceSlug,
          slug,
          name,
          sortOrder,
          status: options.status,
        });
        emit(io, options, row, () => `created component ${row.slug} (${row.id})`);
      });
    },
  );
  withCommon(
    component
      .command('set-status')
      .argument('<slug>')
      .argument('[status]', COMPONENT_STATUSES.join(', '))
      .description("set a component's current status"),
  ).action(async (slug: string, statusArg: string | undefined, options: CommonOptions) => {
    const status = await required(io, statusArg, {
      flag: 'status',
      message: 'Status',
      kind: 'select',
      choices: COMPONENT_STATUSES,
    });
    await withApp(io, options, async (app) => {
      const row: ComponentRow = await app.services.status.setComponentStatus(slug, status);
      emit(io, options, row, () => `${row.slug}: ${row.current_status}`);
    });
  });
  withCommon(component.command('list').description('every component')).action(async (options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const rows = (await app.services.status.listComponents()).map((r) => ({ ...r }));
      emit(io, options, rows, () => table(rows, ['slug', 'name', 'current_status', 'service_id', 'id']));
    });
  });
}
