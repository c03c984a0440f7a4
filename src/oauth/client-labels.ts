import type { ClientRegistration } from './tables.js';

/** What the pages need of a client to name it. */
export interface NamedClient {
  id: string;
  name: string;
  registration: ClientRegistration;
}

/** A client as the pages name it (docs/oauth.md, Authorize, Pages). */
export interface ShownClient {
  /** The name with its marks: `Acme`, `Agent (unverified)`, `Agent (unverified, published by docs.example)`. */
  label: string;
  /** Self-registered: the name is the client's own claim, checked by nobody. */
  unverified: boolean;
  /** A metadata document's host (its client_id's), the one part of its identity a domain vouches for. */
  documentHost: string | null;
}

/**
 * How the sign-in, consent and approval pages name a client: an operator's (`gantry client
 * create`) by its name; a self-registered one marked unverified wherever its name appears, and a
 * metadata document's with the document's host (punycode for an international name, so a
 * lookalike domain shows as what it is). `kind` leads the marks: `Agent (MCP, unverified)`.
 */
export function showClient(client: NamedClient, kind?: string): ShownClient {
  const unverified = client.registration !== 'cli';
  const documentHost = client.registration === 'metadata_document' ? new URL(client.id).host : null;
  const marks = [kind, unverified && 'unverified', documentHost && `published by ${documentHost}`].filter(
    (mark): mark is string => typeof mark === 'string',
  );
  return { label: marks.length > 0 ? `${client.name} (${marks.join(', ')})` : client.name, unverified, documentHost };
}
