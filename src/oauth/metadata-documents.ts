import type { Kernel } from '../kernel.js';
import { guardedFetch, readLimited } from '../lib/outbound.js';
import type { Client, SelfRegisteredClient } from './types.js';
import { clientNameProblem, registeredScopes, selfRegisteredMetadataProblem } from './registration-rules.js';

/** A document is small (a name and a few redirect URIs); anything bigger is refused unread. */
const MAX_DOCUMENT_BYTES = 16 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_URL_LENGTH = 1024;
/** How long a fetched copy is used: the document's Cache-Control max-age, within these bounds. */
const MIN_CACHE_SEC = 5 * 60;
const MAX_CACHE_SEC = 24 * 3600;
const DEFAULT_CACHE_SEC = 3600;
/** The one answer for every failure to fetch a document, whatever the cause (see fetchDocument). */
const NOT_FETCHED = "This application's metadata document could not be fetched.";

/** Why an authorize request cannot go on, and, where the user can do something else, what. */
export interface ClientProblem {
  problem: string;
  advice?: string;
}

/** What the document module needs of the clients: reading the stored copy and storing a new one. */
export interface ClientLookup {
  find(id: string): Promise<Client | null>;
  saveSelfRegistered(client: SelfRegisteredClient): Promise<Client>;
}

/** A client_id that names a metadata document rather than a stored client (it is a URL). */
export const isMetadataDocumentId = (id: string) => /^https?:\/\//i.test(id) && id.length <= MAX_URL_LENGTH;

/**
 * The forms a document URL may take: https with a path, no fragment, no credentials, in the
 * normal form (no dot segments). Plain http only on a loopback host, and only when private networks are allowed
 * (a development setup; docs/oauth.md, Client ID Metadata Documents).
 */
function urlProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'the client_id is not a valid URL';
  }
  const devHttp =
    allowPrivate && url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  if (url.protocol !== 'https:' && !devHttp) return 'a client_id URL must use https';
  if (url.username || url.password) return 'a client_id URL must not carry credentials';
  if (raw.includes('#')) return 'a client_id URL must not carry a fragment';
  // The parser resolves dot segments and lower-cases the host: a URL it changes is not the document's own name.
  if (url.pathname === '/' || url.href !== raw) return 'a client_id URL must have a path and be in normal form';
  return null;
}

/** Whether a document's host is on the operator's list (none listed: every host); `*.x` is any name under x. */
function hostTrusted(hostname: string, trusted: readonly string[]): boolean {
  if (trusted.length === 0) return true;
  return trusted.some((t) => (t.startsWith('*.') ? hostname.endsWith(t.slice(1)) : hostname === t));
}

/** Seconds a copy stays fresh: max-age within [5 min, 24 h]; no-store or no-cache get the minimum. */
function cacheSeconds(header: string | null): number {
  if (!header) return DEFAULT_CACHE_SEC;
  const directives = header.toLowerCase();
  if (/(^|[\s,])(no-store|no-cache)($|[\s,=])/.test(directives)) return MIN_CACHE_SEC;
  const maxAge = /(?:^|[\s,])max-age\s*=\s*"?(\d+)/.exec(directives);
  if (!maxAge) return DEFAULT_CACHE_SEC;
  return Math.min(MAX_CACHE_SEC, Math.max(MIN_CACHE_SEC, Number(maxAge[1])));
}

/**
 * Client ID Metadata Documents: a client whose client_id is an https URL publishes its metadata
 * there. The document is fetched through the outbound guard (no private addresses, no redirects,
 * size and time limits), must name itself as client_id and be a public client's; the copy is
 * stored as the client's row (grants refer to it) and used until its cache lifetime ends.
 */
export function createMetadataDocuments(kernel: Pick<Kernel, 'clock' | 'config' | 'logger'>, clients: ClientLookup) {
  const { clock, config, logger } = kernel;
  const policy = config.oauthMetadataDocuments;
  const fetchOut = guardedFetch({
    allowPrivate: config.allowPrivateNetworks,
    timeoutMs: FETCH_TIMEOUT_MS,
    maxBytes: MAX_DOCUMENT_BYTES,
  });

  /**
   * The document, or null when it could not be had: no answer, a refused or unknown host, a
   * status other than 200, too big, too slow, not JSON. Every such failure gets one message, and
   * the cause goes to the log only: a page that said which would tell anyone which internal names
   * exist and which ports answer from Gantry's address (docs/oauth.md, Client ID Metadata Documents).
   */
  async function fetchDocument(url: string): Promise<{ document: unknown; maxAgeSec: number } | null> {
    const notFetched = (cause: string) => {
      logger.warn('oauth client metadata document not fetched', { clientId: url, cause });
      return null;
    };
    let response: Response;
    let text: string;
    try {
      response = await fetchOut(url, { headers: { accept: 'application/json' } });
      text = await readLimited(response, MAX_DOCUMENT_BYTES);
    } catch (err) {
      return notFetched((err as Error).message);
    }
    if (response.status !== 200) return notFetched(`the host answered HTTP ${response.status}`);
    try {
      return { document: JSON.parse(text), maxAgeSec: cacheSeconds(response.headers.get('cache-control')) };
    } catch {
      return notFetched('the answer is not JSON');
    }
  }

  /** The stored client's fields from a document, or what is wrong with it. */
  function readDocument(url: string, document: unknown): SelfRegisteredClient | { problem: string } {
    if (typeof document !== 'object' || document === null || Array.isArray(document))
      return { problem: 'the document is not a JSON object' };
    const doc = document as Record<string, unknown>;
    if (doc.client_id !== url) return { problem: 'the document names another client_id than its URL' };
    if (doc.client_secret !== undefined) return { problem: 'the document must not carry a client_secret' };
    const problem = selfRegisteredMetadataProblem(doc);
    if (problem) return { problem: problem.description };
    const nameProblem = clientNameProblem(doc.client_name, config.brand.name);
    if (nameProblem) return { problem: nameProblem };
    const scope = registeredScopes(doc);
    if ('error' in scope) return { problem: scope.description };
    return {
      id: url,
      name: typeof doc.client_name === 'string' ? doc.client_name.trim() : new URL(url).host,
      redirectUris: [...new Set(doc.redirect_uris as string[])],
      scopes: scope.scopes,
      registration: 'metadata_document',
      metadataExpiresAt: null,
    };
  }

  /**
   * What the user can do when this server takes no document from this application: the
   * operator's own client (docs/mcp.md, Connecting clients), or registering at the RFC 7591
   * endpoint when it is open. Said on the page, since the user cannot fix the document.
   */
  function instead(also?: string): string {
    const ways = [
      'ask the operator of this server for a client registered for you, and give your application its client ID',
      ...(config.oauthDynamicRegistration
        ? [
            "use your application's option to register itself with this server (dynamic client registration), if it has one",
          ]
        : []),
      ...(also ? [also] : []),
    ];
    return `What you can do instead: ${ways.join('; or ')}.`;
  }

  /**
   * The operator's choice (docs/oauth.md, Client ID Metadata Documents): documents off, or this
   * document's host not on the list. Checked before anything is fetched, and for a stored copy too.
   */
  function policyRefusal(url: string): 'documents switched off' | 'host not trusted' | null {
    if (!policy.enabled) return 'documents switched off';
    return hostTrusted(new URL(url).hostname, policy.trustedHosts) ? null : 'host not trusted';
  }

  /** The page's words for a refusal by policy: whose choice it is, and what to do instead. */
  function refusedByPolicy(url: string, cause: NonNullable<ReturnType<typeof policyRefusal>>): ClientProblem {
    if (cause === 'documents switched off')
      return {
        problem:
          'This server does not accept applications that name themselves by a metadata document (a client_id that is a web address): its operator switched them off.',
        advice: instead(),
      };
    const host = new URL(url).hostname;
    return {
      problem: `This server accepts metadata documents only from the hosts its operator trusts, and ${host} is not one of them.`,
      advice: instead(`ask the operator to trust ${host}`),
    };
  }

  return {
    /** Whether this server takes documents from this client_id's host at all (a stored copy included). */
    allowed: (url: string): boolean => URL.canParse(url) && policyRefusal(url) === null,

    async resolve(url: string): Promise<{ client: Client } | ClientProblem> {
      const fail = (why: string) => ({ problem: `This application's metadata document cannot be used: ${why}.` });
      const urlIssue = urlProblem(url, config.allowPrivateNetworks);
      if (urlIssue) return fail(urlIssue);
      const cause = policyRefusal(url);
      if (cause) {
        logger.info("oauth client metadata document refused by the operator's policy", { clientId: url, cause });
        return refusedByPolicy(url, cause);
      }
      const now = clock.now();
      const stored = await clients.find(url);
      if (stored && stored.registration !== 'metadata_document') return fail('the client_id is taken');
      if (stored?.metadataExpiresAt && stored.metadataExpiresAt > now.toISOString()) return { client: stored };

      const fetched = await fetchDocument(url);
      // The same words whatever the cause (N-L4), and what to do when this server cannot reach
      // the publisher's site at all (an on-premises server without internet access, for one).
      if (!fetched)
        return {
          problem: NOT_FETCHED,
          advice: `The application names itself by a document on its publisher's web site, which this server must download first; a server that cannot reach that site cannot accept the application this way. ${instead()}`,
        };
      const read = readDocument(url, fetched.document);
      if ('problem' in read) return fail(read.problem);
      read.metadataExpiresAt = new Date(now.getTime() + fetched.maxAgeSec * 1000).toISOString();
      return { client: await clients.saveSelfRegistered(read) };
    },
  };
}
