import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, required, table, withCommon, type CliIo, type CommonOptions } from './io.js';
import { isoOf } from '../status/context.js';
import { MAINTENANCE_STATUSES } from '../status/rules.js';
import { refusalOf } from './checks.js';
import type { MaintenanceRow } from '../status/store.js';

/** Scheduled maintenance windows of the status page's services (docs/status.md). */
export function makeStatusMaintenanceCommands(program: Command, io: CliIo): void {
  const maintenance = program.command('maintenance').description('scheduled maintenance');
  withCommon(
    maintenance
      .command('create')
      .description('schedule a maintenance window (it starts and ends by itself)')
      .option('--title <title>', 'title')
      .option('--service <slug>', 'service under maintenance')
      .option('--starts <iso>', 'start, ISO 8601')
      .option('--ends <iso>', 'end, ISO 8601')
      .option('--description <text>', 'description'),
  ).action(
    async (
      options: CommonOptions & {
        title?: string;
        service?: string;
        starts?: string;
        ends?: string;
        description?: string;
      },
    ) => {
      const title = await required(io, options.title, { flag: 'title', message: 'Title' });
      const serviceSlug = await required(io, options.service, { flag: 'service', message: 'Service slug' });
      const startsAt = await required(io, options.starts, {
        flag: 'starts',
        message: 'Starts (ISO 8601)',
        check: refusalOf((answer) => isoOf('starts', answer)),
      });
      const endsAt = await required(io, options.ends, {
        flag: 'ends',
        message: 'Ends (ISO 8601)',
        check: refusalOf((answer) => isoOf('ends', answer)),
      });
      await withApp(io, options, async (app) => {
        const row: MaintenanceRow = await app.services.status.createMaintenance({
          title,
          serviceSlug,
          startsAt,
          endsAt,
          description: options.description,
        });
        emit(io, options, row, () => `scheduled maintenance ${row.id} (${row.status})`);
      });
    },
  );
  withCommon(
    maintenance
      .command('update')
      .argument('<id>', 'maintenance id or slug')
      .description('move a window (in_progress, completed, cancelled) or reschedule it')
      .option('--status <status>', MAINTENANCE_STATUSES.join('|'))
      .option('--starts <iso>', 'new start')
      .option('--ends <iso>', 'new end'),
  ).action(async (id: string, options: CommonOptions & { status?: string; starts?: string; ends?: string }) => {
    const rescheduling = options.starts !== undefined || options.ends !== undefined;
    const status = rescheduling
      ? options.status
      : await required(io, options.status, {
          flag: 'status',
          message: 'Status',
          kind: 'select',
          choices: MAINTENANCE_STATUSES,
        });
    await withApp(io, options, async (app) => {
      const row = await app.services.status.updateMaintenance(id, {
        status,
        startsAt: options.starts,
        endsAt: options.ends,
      });
      emit(io, options, row, () => `maintenance ${row.id}: ${row.status}`);
    });
  });
  withCommon(maintenance.command('list').description('every maintenance window')).action(
    async (options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const rows = (await app.services.status.listMaintenance()).map((r) => ({ ...r }));
        emit(io, options, rows, () => table(rows, ['id', 'status', 'starts_at', 'ends_at', 'title']));
      });
    },
  );
}
