import type { Command } from 'commander';
import { notFound } from '../http/errors.js';
import type { SubscriberView } from '../status/service.js';
import { confirmed, withYes, type YesOption } from './confirm.js';
import { withApp } from './context.js';
import { emit, table, withCommon, type CliIo, type CommonOptions } from './io.js';

/** One line of the list: a webhook's deliveries and last error where it has them. */
const row = (s: SubscriberView) => ({
  id: s.id,
  kind: s.kind,
  address: s.address,
  state: s.state,
  components: s.components === null ? 'all' : s.components.join(','),
  deliveries: s.deliveries
    ? `${s.deliveries.delivered} ok, ${s.deliveries.pending} pending, ${s.deliveries.failed} failed`
    : null,
  lastError: s.lastDelivery?.lastError ?? s.disabledReason,
  createdAt: s.createdAt,
});

/** The status page's subscribers (docs/status.md, Subscriptions): who is told, and removing one. */
export function makeStatusSubscriberCommands(program: Command, io: CliIo): void {
  const status = program.command('status').description('the public status service');
  const subscribers = status.command('subscribers').description('email and webhook subscribers of the status page');
  withCommon(subscribers.command('list').description('every subscriber, pending ones included')).action(
    async (options: CommonOptions) => {
      await withApp(io, options, async (app) => {
        const list = await app.services.status.listSubscribers();
        emit(io, options, list, () =>
          table(list.map(row), [
            'id',
            'kind',
            'address',
            'state',
            'components',
            'deliveries',
            'lastError',
            'createdAt',
          ]),
        );
      });
    },
  );
  withCommon(
    withYes(
      subscribers
        .command('remove')
        .argument('<id>', 'the subscriber id (from list)')
        .description('remove a subscriber: nothing more is sent to it, and an address is deleted with its mails'),
    ),
  ).action(async (id: string, options: CommonOptions & YesOption) => {
    await withApp(io, options, async (app) => {
      const { status: service } = app.services;
      const target = (await service.listSubscribers()).find((s) => s.id === id.toLowerCase());
      if (!target) throw notFound(`Subscriber ${id}`);
      await confirmed(
        io,
        options,
        `Remove the ${target.kind} subscriber ${target.address} (id ${target.id})? Nothing more is sent to it${target.kind === 'email' ? ', and the address and its mails are deleted' : ''}.`,
      );
      await service.removeSubscriber(target.id);
      emit(
        io,
        options,
        { id: target.id, kind: target.kind, address: target.address, removed: true },
        () => `removed ${target.kind} subscriber ${target.address} (${target.id})`,
      );
    });
  });
}
