import type { Server } from '@hapi/hapi';
import type { Database } from '../db/connection.js';
import { pingDatabase } from '../db/store/health.js';
import { DomainError } from './errors.js';
import { reply } from './envelope.js';
import { ok, shape } from './openapi/declare.js';
import Joi from 'joi';

/** How long readiness waits for the database before calling it down. */
const PING_TIMEOUT_MS = 3_000;

type Part = 'up' | 'down';

async function databaseState(db: Database): Promise<Part> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Part>((resolve) => {
    timer = setTimeout(() => resolve('down'), PING_TIMEOUT_MS);
  });
  const ping = pingDatabase(db).then(
    (): Part => 'up',
    (): Part => 'down',
  );
  try {
    return await Promise.race([ping, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Liveness (the process answers) and readiness (the database answers and, on PostgreSQL, the
 * change feed's LISTEN session is up: without it this node would serve stale caches), for
 * systemd and proxies (docs/kernel.md, Health).
 */
export function registerHealth(
  server: Server,
  db: Database,
  listenState: () => Part | null,
  isDraining: () => boolean,
): void {
  server.route({
    method: 'GET',
    path: '/healthz',
    options: {
      id: 'kernel.healthz',
      auth: false,
      plugins: { gantry: { rateLimit: false, responses: ok(shape({ status: Joi.string().valid('ok') })) } },
    },
    handler: (request, h) => reply(request, h, { status: 'ok' }),
  });
  server.route({
    method: 'GET',
    path: '/readyz',
    options: {
      id: 'kernel.readyz',
      auth: false,
      plugins: {
        gantry: {
          rateLimit: false,
          responses: ok(
            shape({
              status: Joi.string().valid('ready'),
              // PostgreSQL only: each part readiness covers.
              database: Joi.string().valid('up').optional(),
              changeFeed: Joi.string().valid('up').optional(),
            }),
          ),
          errors: ['NOT_CONFIGURED'],
        },
      },
    },
    handler: async (request, h) => {
      if (isDraining()) throw new DomainError('NOT_CONFIGURED', 'Shutting down');
      const database = await databaseState(db);
      const changeFeed = listenState();
      const down = [database === 'down' && 'database', changeFeed === 'down' && 'change feed (LISTEN)'].filter(Boolean);
      if (down.length > 0) {
        const parts = changeFeed === null ? { database } : { database, changeFeed };
        throw new DomainError('NOT_CONFIGURED', `Not ready: ${down.join(' and ')} down`, parts);
      }
      return reply(request, h, changeFeed === null ? { status: 'ready' } : { status: 'ready', database, changeFeed });
    },
  });
}
