import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, numberOption, required, table, UsageError, withCommon, type CliIo, type CommonOptions } from './io.js';
import { COMPONENT_STATUSES, INCIDENT_IMPACTS, INCIDENT_STATUSES, MAINTENANCE_STATUSES } from '../status/rules.js';
import type { IncidentDetail } from '../status/service.js';
import type { ComponentRow, MaintenanceRow, ServiceRow } from '../status/store.js';

const showService = (s: ServiceRow) => ({ ...s, is_public: s.is_public === 1 });
const showIncident = (i: IncidentDetail) => ({ ...i, updates: [...i.updates].reverse() });

/** Status publishing (docs/status.md): services, components, incidents, maintenance. */
export function makeStatusCommands(program: Command, io: CliIo): void {
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

  const incident = program.command('incident').description('status page incidents');
  withCommon(
    incident
      .command('create')
      .description('open an incident (its message is the first update)')
      .option('--title <title>', 'title')
      .option('--impact <impact>', INCIDENT_IMPACTS.join('|'))
      .option('--status <status>', INCIDENT_STATUSES.filter((s) => s !== 'postmortem_ready').join('|'))
      .option('--message <message>', 'first update')
      .option('--service <slug...>', 'affected services')
      .option('--component <slug...>', 'affected components')
      .option('--author <name>', 'author shown on the update'),
  ).action(
    async (
      options: CommonOptions & {
        title?: string;
        impact?: string;
        status?: string;
        message?: string;
        service?: string[];
        component?: string[];
        author?: string;
      },
    ) => {
      const title = await required(io, options.title, { flag: 'title', message: 'Title' });
      const impact = await required(io, options.impact, {
        flag: 'impact',
        message: 'Impact',
        kind: 'select',
        choices: INCIDENT_IMPACTS,
      });
      const status = await required(io, options.status, {
        flag: 'status',
        message: 'Status',
        kind: 'select',
        choices: INCIDENT_STATUSES,
      });
      const message = await required(io, options.message, { flag: 'message', message: 'Message' });
      await withApp(io, options, async (app) => {
        const row = showIncident(
          await app.services.status.createIncident({
            title,
            impact,
            status,
            message,
            serviceSlugs: options.service,
            componentSlugs: options.component,
            authorName: options.author ?? null,
          }),
        );
        emit(io, options, row, () => `opened incident ${row.id} (${row.status}, ${row.impact})`);
      });
    },
  );
  withCommon(
    incident
      .command('update')
      .argument('<id>', 'incident id or slug')
      .description('post an update; the incident takes its status (resolved, then postmortem_ready)')
      .option('--status <status>', INCIDENT_STATUSES.join('|'))
      .option('--message <message>', 'update text')
      .option('--impact <impact>', `change the impact (${INCIDENT_IMPACTS.join('|')})`)
      .option('--author <name>', 'author shown on the update'),
  ).action(
    async (
      id: string,
      options: CommonOptions & { status?: string; message?: string; impact?: string; author?: string },
    ) => {
      const status = await required(io, options.status, {
        flag: 'status',
        message: 'Status',
        kind: 'select',
        choices: INCIDENT_STATUSES,
      });
      const message = await required(io, options.message, { flag: 'message', message: 'Message' });
      await withApp(io, options, async (app) => {
        const row = showIncident(
          await app.services.status.updateIncident(id, {
            status,
            message,
            impact: options.impact,
            authorName: options.author ?? null,
          }),
        );
        emit(io, options, row, () => `incident ${row.id}: ${row.status}`);
      });
    },
  );
  withCommon(incident.command('list').description('every incident, newest first')).action(
    async (options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const rows = (await app.services.status.listIncidents()).map((r) => ({ ...r }));
        emit(io, options, rows, () => table(rows, ['id', 'status', 'impact', 'started_at', 'title']));
      });
    },
  );
  withCommon(
    incident.command('show').argument('<id>', 'incident id or slug').description('an incident with its timeline'),
  ).action(async (id: string, options: CommonOptions) => {
    await withApp(io, options, async (app) => {
      const row = showIncident(await app.services.status.incident(id));
      emit(io, options, row, () =>
        [
          `${row.title} (${row.status}, ${row.impact})`,
          ...row.updates.map((u) => `${u.created_at}  ${u.status}: ${u.message}`),
        ].join('\n'),
      );
    });
  });

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
      const startsAt = await required(io, options.starts, { flag: 'starts', message: 'Starts (ISO 8601)' });
      const endsAt = await required(io, options.ends, { flag: 'ends', message: 'Ends (ISO 8601)' });
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
