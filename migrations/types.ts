import type { Kysely } from 'kysely';

/** A numbered schema change. `up` receives a transaction; the migrator records `id` in it too. */
export interface Migration {
  id: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations see the schema as it was, not as DB types it now
  up(db: Kysely<any>): Promise<void>;
}
