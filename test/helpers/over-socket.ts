import type { Server } from '@hapi/hapi';

/**
 * Requests over the server's real socket, each telling whether hapi saw it: a prepared answer
 * (src/http/prepared.ts) or a direct form (src/http/direct-forms.ts) is written without a hapi
 * request, and inject() would never show it.
 * Call before the server starts; it counts every request hapi sees from then on.
 */
export function requestsOverSocket(server: Server) {
  let seenByHapi = 0;
  server.ext('onRequest', (_request, h) => {
    seenByHapi++;
    return h.continue;
  });
  return async (url: string, headers: Record<string, string> = {}, method = 'GET', sent?: string) => {
    const seen = seenByHapi;
    const res = await fetch(`${server.info.uri}${url}`, { method, headers, body: sent });
    const body = Buffer.from(await res.arrayBuffer());
    return { res, body, viaHapi: seenByHapi > seen };
  };
}
