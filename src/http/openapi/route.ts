import type { Server } from '@hapi/hapi';
import Joi from 'joi';
import { sha256Hex } from '../../lib/crypto.js';
import { API } from '../paths.js';
import { buildOpenApiDocument, routeTableOf, type OpenApiOptions } from './document.js';
import { empty, jsonBody } from './declare.js';

/**
 * Registers `GET /api/v1/openapi.json` (when `serve`) and takes the route table as it is then,
 * this route included. The document is built from that table on first use, not at start: an
 * idle server does not keep it (docs/openapi.md); it is then answered from memory with a strong
 * ETag (If-None-Match answered 304 by hapi). `server.app.openapi` gives the same document (built
 * on first read) for the tests' checks of every answer; a test may set it to another one.
 */
export function registerOpenApi(server: Server, options: OpenApiOptions, serve: boolean): void {
  let built: { document: Record<string, unknown>; body: string; etag: string } | null = null;
  let table: ReturnType<typeof routeTableOf> | null = null;
  const document = () => {
    if (!built) {
      const value = buildOpenApiDocument(table!, options);
      const body = JSON.stringify(value);
      built = { document: value, body, etag: sha256Hex(body).slice(0, 32) };
      table = null;
    }
    return built;
  };
  if (serve) {
    server.route({
      method: 'GET',
      path: `${API}/openapi.json`,
      options: {
        id: 'kernel.openapi',
        auth: false,
        description: 'This OpenAPI 3.1 document',
        plugins: {
          gantry: {
            responses: {
              200: jsonBody(Joi.object().unknown(), 'The OpenAPI 3.1 document of every route (not the envelope)'),
              304: empty('Not modified (If-None-Match matched the ETag)'),
            },
          },
        },
      },
      handler: (_request, h) => {
        const { body, etag } = document();
        const response = h.entity({ etag });
        if (response) return response;
        return h.response(body).type('application/json; charset=utf-8').header('Cache-Control', 'no-cache');
      },
    });
  }
  table = routeTableOf(server);
  let replaced: unknown;
  Object.defineProperty(server.app, 'openapi', {
    enumerable: true,
    get: () => replaced ?? document().document,
    set: (value: unknown) => {
      replaced = value;
    },
  });
}
