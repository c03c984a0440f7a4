import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { migrations } from '../../migrations/index.js';

/**
 * The SQLite counterpart of PostgreSQL's template database (test/helpers/postgres.ts): a file
 * migrated once, copied as the database of each fresh test app, instead of each app running
 * every migration (about 40 ms of CPU each; docs/postgres.md, Test run times). test/run.mjs
 * names the file for the whole run in GANTRY_TEST_SQLITE_TEMPLATE (its build, so a changed
 * migration is never read from an older run); a file run on its own makes one for its process.
 */
let template: Promise<string> | null = null;

async function migratedTemplate(): Promise<string> {
  const named = process.env.GANTRY_TEST_SQLITE_TEMPLATE;
  const file = named ?? path.join(ownDirectory(), 'template.db');
  if (existsSync(file)) return file;
  // Migrated under another name and renamed whole: a process that copies it meanwhile never
  // sees half a template, and two processes making it at once both write a complete one.
  const building = `${file}.${process.pid}`;
  const handle = openDatabase(building);
  try {
    await migrate(handle.db, migrations);
  } finally {
    // Closing the last connection checkpoints the WAL into the file and removes it.
    await handle.close();
  }
  renameSync(building, file);
  return file;
}

function ownDirectory(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gantry-sqlite-template-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Puts a migrated database at `dbFile`, which does not exist yet. */
export async function copyMigratedDatabase(dbFile: string): Promise<void> {
  template ??= migratedTemplate();
  copyFileSync(await template, dbFile);
}
