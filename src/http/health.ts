import type { Server } from '@hapi/hapi';
import type { Database } from '../db/connection.js';
import { pingDatabase } from '../db/store/health.js';
import { DomainError } from './errors.js';
import { reply } from './envelope.js';
import { ok, shape } from './openapi/declare.js';
import Joi from 'joi';

/** Liveness (the process answers) and readiness (the database answers), for systemd and proxies. */
export function registerHealth(server: Server, db: Database, isDraining: () => boolean): void {
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
          responses: ok(shape({ status: Joi.string().valid('ready') })),
          errors: ['NOT_CONFIGURED'],
        },
      },
    },
    handler: async (request, h) => {
      if (isDraining()) throw new DomainError('NOT_CONFIGURED', 'Shutting down');
      await pingDatabase(db);
      return reply(request, h, { status: 'ready' });
    },
  });
}
