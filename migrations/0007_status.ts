import type { Migration } from './types.js';

/** The public status service: services, components and their history, incidents, maintenance, snapshots. */
export const migration: Migration = {
  id: '0007_status',
  async up(db) {
    await db.schema
      .createTable('status_services')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('slug', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('sort_order', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('status_components')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('service_id', 'text', (c) => c.notNull().references('status_services.id').onDelete('cascade'))
      .addColumn('slug', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('current_status', 'text', (c) => c.notNull())
      .addColumn('sort_order', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('status_components_service').on('status_components').columns(['service_id']).execute();

    // One row per change: the status holds from changed_at until the next row of the component.
    await db.schema
      .createTable('status_component_history')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('component_id', 'text', (c) => c.notNull().references('status_components.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('changed_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('status_component_history_component')
      .on('status_component_history')
      .columns(['component_id', 'changed_at'])
      .execute();

    await db.schema
      .createTable('status_incidents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('slug', 'text', (c) => c.notNull().unique())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('impact', 'text', (c) => c.notNull())
      .addColumn('severity', 'text')
      .addColumn('description', 'text')
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('resolved_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('status_incidents_started').on('status_incidents').columns(['started_at']).execute();

    await db.schema
      .createTable('status_incident_updates')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('incident_id', 'text', (c) => c.notNull().references('status_incidents.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('author_name', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('status_incident_updates_incident')
      .on('status_incident_updates')
      .columns(['incident_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('status_incident_services')
      .addColumn('incident_id', 'text', (c) => c.notNull().references('status_incidents.id').onDelete('cascade'))
      .addColumn('service_id', 'text', (c) => c.notNull().references('status_services.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('status_incident_services_pk', ['incident_id', 'service_id'])
      .execute();

    await db.schema
      .createTable('status_incident_components')
      .addColumn('incident_id', 'text', (c) => c.notNull().references('status_incidents.id').onDelete('cascade'))
      .addColumn('component_id', 'text', (c) => c.notNull().references('status_components.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('status_incident_components_pk', ['incident_id', 'component_id'])
      .execute();

    await db.schema
      .createTable('status_maintenance')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('slug', 'text', (c) => c.notNull().unique())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('starts_at', 'text', (c) => c.notNull())
      .addColumn('ends_at', 'text', (c) => c.notNull())
      .addColumn('service_id', 'text', (c) => c.notNull().references('status_services.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('status_maintenance_status')
      .on('status_maintenance')
      .columns(['status', 'starts_at'])
      .execute();

    await db.schema
      .createTable('status_snapshots')
      .addColumn('snapshot_date', 'text', (c) => c.notNull())
      .addColumn('scope_type', 'text', (c) => c.notNull())
      .addColumn('scope_key', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('computed_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('status_snapshots_pk', ['snapshot_date', 'scope_type', 'scope_key'])
      .execute();

    // The uptime summaries the daily job records, one row per window (the latest computation).
    await db.schema
      .createTable('status_uptime_summaries')
      .addColumn('window', 'text', (c) => c.primaryKey())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('computed_at', 'text', (c) => c.notNull())
      .execute();
  },
};
