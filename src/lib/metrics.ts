import { statSync } from 'node:fs';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The SQLite file's path, or a reader of the PostgreSQL database's size in bytes. */
type DatabaseSize = string | (() => Promise<number>);

/**
 * The process's Prometheus registry (docs/operations.md, Metrics). One per kernel, never
 * prom-client's global one, so several apps in one test process do not collide. Domains make
 * their own counters on it through the kernel; the kernel knows none of their names.
 */
export class Metrics {
  readonly registry = new Registry();
  /** Whether anything scrapes (GANTRY_METRICS_PORT): per-request series are only kept then. */
  readonly served: boolean;

  /**
   * `processMetrics` only when something scrapes (GANTRY_METRICS_PORT): prom-client's process
   * collectors keep an event-loop delay monitor and a GC observer running, work nobody reads
   * otherwise. They keep prom-client's standard names (`process_*`, `nodejs_*`), unprefixed,
   * which the common Node.js dashboards query; Gantry's own metrics are `gantry_*`
   * (docs/operations.md, Metrics).
   */
  constructor(database: DatabaseSize, options: { processMetrics: boolean }) {
    this.served = options.processMetrics;
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    if (typeof database !== 'string') {
      // PostgreSQL: the database's size as the server counts it (docs/operations.md, Metrics).
      this.gauge('gantry_db_size_bytes', 'Size of the PostgreSQL database', [], async function () {
        this.set(await database());
      });
      return;
    }
    const dbFile = database;
    const size = (file: string) => {
      try {
        return statSync(file).size;
      } catch {
        return 0;
      }
    };
    // Read at scrape time: a stat per scrape is cheaper than tracking every write.
    this.gauge('gantry_db_file_bytes', 'Size of the SQLite database file', [], function () {
      this.set(size(dbFile));
    });
    this.gauge('gantry_db_wal_bytes', 'Size of the SQLite write-ahead log', [], function () {
      this.set(size(`${dbFile}-wal`));
    });
  }

  /** The same name twice (a second listener over the same kernel) gives the same metric. */
  private existing<M>(name: string): M | undefined {
    return this.registry.getSingleMetric(name) as M | undefined;
  }

  counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return this.existing(name) ?? new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  gauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    collect?: (this: Gauge<L>) => void | Promise<void>,
  ): Gauge<L> {
    return this.existing(name) ?? new Gauge({ name, help, labelNames, registers: [this.registry], collect });
  }

  histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
    return this.existing(name) ?? new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }

  /** The exposition text and its content type, for `GET /metrics`. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
