import type { Command } from 'commander';
import { withApp } from './context.js';
import { emit, required, table, withCommon, type CliIo, type CommonOptions } from './io.js';
import { INCIDENT_IMPACTS, INCIDENT_STATUSES } from '../status/rules.js';
import type { IncidentDetail } from '../status/service.js';

const showIncident = (i: IncidentDetail) => ({ ...i, updates: [...i.updates].reverse() });

/** Incidents on the status page and their updates (docs/status.md). */
export function makeStatusIncidentCommands(program: Command, io: CliIo): void {
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
}
