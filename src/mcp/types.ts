/** The official SDK's server package, loaded on the endpoint's first request (see service.ts). */
export type ServerSdk = typeof import('@modelcontextprotocol/server');
