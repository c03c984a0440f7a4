import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';

const errorsIn = (logs: string[]) => logs.filter((line) => (JSON.parse(line) as { level: string }).level === 'error');

/**
 * A server keeps the status projection rebuilt ahead of readers (docs/status.md); stopping it
 * stops those rebuilds before the database closes, so a stop logs no error.
 */
describe('stopping a server with the status projection active', () => {
  it('logs no error, with a rebuild just asked for when the stop begins', async () => {
    const t = await createTestApp();
    assert.equal((await t.inject('/api/v1/status')).statusCode, 200);
    // A change heard at the last moment: the eager rebuild is queued as the server stops.
    t.app.services.status.projection.invalidate();
    await t.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(errorsIn(t.logs), []);
  });

  it('logs no error, with a rebuild running when the stop begins', async () => {
    const t = await createTestApp();
    assert.equal((await t.inject('/api/v1/status')).statusCode, 200);
    t.app.services.status.projection.invalidate();
    // Let the eager rebuild start its queries, then stop under it.
    await new Promise((resolve) => setImmediate(resolve));
    await t.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(errorsIn(t.logs), []);
  });
});
