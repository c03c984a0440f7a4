import type { Server } from '@hapi/hapi';
import Joi from 'joi';
import { sha256Hex } from '../../lib/crypto.js';
import { API } from '../paths.js';
import { buildOpenApiDocument, type OpenApiOptions } from './document.js';
import { empty, jsonBody } from './declare.js';

/**
 * Registers `GET /api/v1/openapi.json` (when `serve`), then builds the document from the whole
 * table, this route included, once; it is answered from memory with a strong ETag (If-None-Match
 * answered 304 by hapi). The document is also kept in `server.app.openapi` for the tests' checks
 * of every answer (docs/openapi.md).
 */
export function registerOpenApi(server: Server, options: OpenApiOptions, serve: boolean): void {
  let body = '';
  let etag = '';
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
        const response = h.entity({ etag });
        if (response) return response;
        return h.response(body).type('application/json; charset=utf-8').header('Cache-Control', 'no-cache');
      },
    });
  }
  const document = buildOpenApiDocument(server, options);
  body = JSON.stringify(document);
  etag = sha256Hex(body).slice(0, 32);
  (server.app as { openapi?: unknown }).openapi = document;
}
