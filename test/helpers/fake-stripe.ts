import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';

/** A key and a webhook secret shaped like Stripe's test-mode ones. */
export const FAKE_STRIPE_KEY = `sk_test_${'f4ke'.repeat(6)}`;
const FAKE_WEBHOOK_SECRET = `whsec_${'t3st'.repeat(8)}`;

interface RecordedRequest {
  method: string;
  path: string;
  /** The form body decoded into nested objects, as Stripe reads it. */
  params: Record<string, unknown>;
  raw: string;
  idempotencyKey: string | null;
  authorization: string | null;
}

interface SubscriptionItem {
  id: string;
  object: 'subscription_item';
  quantity: number;
  subscription: string;
  metadata: Record<string, string>;
}

/** What the next matching call does instead of its normal answer. */
type Failure = { status: number; body: unknown } | 'drop-after-apply';

const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

/** Stripe's bracket notation (`a[b][0][c]=v`) into nested objects and arrays. */
function parseForm(body: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.split(/\[|\]\[|\]/).filter((p) => p !== '');
    let node: Record<string, unknown> = root;
    path.forEach((segment, i) => {
      if (i === path.length - 1) node[segment] = value;
      else node = (node[segment] ??= /^\d+$/.test(path[i + 1]) ? [] : {}) as Record<string, unknown>;
    });
  }
  return root;
}

function errorBody(type: string, message: string, code?: string) {
  return { error: { type, message, ...(code ? { code } : {}) } };
}

/**
 * A small Stripe on loopback speaking its wire format: form-encoded requests, JSON answers,
 * Bearer secret keys, and Idempotency-Key honoured (same key and body: the first answer again;
 * same key, other body: 400 idempotency_error). Enough of Checkout Sessions and subscription
 * items for wallet top-ups and seat releases; webhooks signed with Stripe's own algorithm.
 */
export async function startFakeStripe() {
  const requests: RecordedRequest[] = [];
  const items = new Map<string, SubscriptionItem>();
  const sessions = new Map<string, Record<string, unknown>>();
  const idempotent = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  const failures: Array<{ method: string; pathPrefix: string; failure: Failure }> = [];

  function route(method: string, path: string, params: Record<string, unknown>): { status: number; body: unknown } {
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const line = (params.line_items as Array<Record<string, any>> | undefined)?.[0];
      const price = line?.price_data as Record<string, any> | undefined;
      if (params.mode !== 'payment' || !price?.currency || !/^\d+$/.test(String(price.unit_amount ?? '')))
        return {
          status: 400,
          body: errorBody('invalid_request_error', 'Invalid checkout parameters', 'parameter_invalid'),
        };
      for (const field of ['success_url', 'cancel_url'])
        if (!params[field])
          return { status: 400, body: errorBody('invalid_request_error', `Missing ${field}`, 'parameter_missing') };
      const sessionId = id('cs');
      const session = {
        id: sessionId,
        object: 'checkout.session',
        mode: 'payment',
        status: 'open',
        payment_status: 'unpaid',
        url: `https://checkout.stripe.com/c/pay/${sessionId}`,
        amount_total: Number(price.unit_amount) * Number(line?.quantity ?? 1),
        currency: price.currency,
        client_reference_id: params.client_reference_id ?? null,
        customer: params.customer ?? null,
        customer_email: params.customer_email ?? null,
        metadata: params.metadata ?? {},
        success_url: params.success_url,
        cancel_url: params.cancel_url,
        created: Math.floor(Date.now() / 1000),
        expires_at: Math.floor(Date.now() / 1000) + 24 * 3600,
        livemode: false,
      };
      sessions.set(sessionId, session);
      return { status: 200, body: session };
    }
    const itemMatch = /^\/v1\/subscription_items\/([^/]+)$/.exec(path);
    if (itemMatch) {
      const item = items.get(decodeURIComponent(itemMatch[1]));
      if (!item)
        return {
          status: 404,
          body: errorBody('invalid_request_error', `No such subscription item: '${itemMatch[1]}'`, 'resource_missing'),
        };
      if (method === 'GET') return { status: 200, body: item };
      if (params.quantity !== undefined) item.quantity = Number(params.quantity);
      if (params.metadata) Object.assign(item.metadata, params.metadata as Record<string, string>);
      return { status: 200, body: item };
    }
    return { status: 404, body: errorBody('invalid_request_error', `Unrecognized request URL (${method}: ${path})`) };
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://stripe.test');
    const params = parseForm(method === 'GET' ? url.searchParams.toString() : raw);
    const idempotencyKey = (req.headers['idempotency-key'] as string | undefined) ?? null;
    const authorization = req.headers.authorization ?? null;
    requests.push({ method, path: url.pathname, params, raw, idempotencyKey, authorization });
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      res
        .writeHead(status, { 'content-type': 'application/json', 'request-id': id('req'), ...headers })
        .end(JSON.stringify(body));

    if (authorization !== `Bearer ${FAKE_STRIPE_KEY}`)
      return send(401, errorBody('invalid_request_error', 'Invalid API Key provided: sk_test_****'));
    const stored = idempotencyKey && method === 'POST' ? idempotent.get(idempotencyKey) : undefined;
    const fingerprint = `${method} ${url.pathname} ${raw}`;
    if (stored) {
      if (stored.fingerprint !== fingerprint)
        return send(
          400,
          errorBody(
            'idempotency_error',
            'Keys for idempotent requests can only be used with the same parameters they were first used with.',
          ),
        );
      return send(stored.status, stored.body, { 'idempotent-replayed': 'true' });
    }
    const failureAt = failures.findIndex((f) => f.method === method && url.pathname.startsWith(f.pathPrefix));
    const failure = failureAt >= 0 ? failures.splice(failureAt, 1)[0].failure : null;
    if (failure && failure !== 'drop-after-apply') return send(failure.status, failure.body);
    const answer = route(method, url.pathname, params);
    if (idempotencyKey && method === 'POST') idempotent.set(idempotencyKey, { fingerprint, ...answer });
    // The change is made, the answer is lost: what a client retry with the same key must survive.
    if (failure === 'drop-after-apply') return req.socket.destroy();
    send(answer.status, answer.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  function event(type: string, object: unknown, eventId = id('evt')): string {
    return JSON.stringify({
      id: eventId,
      object: 'event',
      api_version: '2026-10-28.endive',
      created: Math.floor(Date.now() / 1000),
      data: { object },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    });
  }

  return {
    url,
    requests,
    items,
    sessions,
    /** A subscription item holding `quantity` seats. */
    addSeatItem(quantity: number): SubscriptionItem {
      const item: SubscriptionItem = {
        id: id('si'),
        object: 'subscription_item',
        quantity,
        subscription: id('sub'),
        metadata: {},
      };
      items.set(item.id, item);
      return item;
    },
    /** The next call matching method and path prefix fails this way (once). */
    failNext(method: string, pathPrefix: string, failure: Failure) {
      failures.push({ method, pathPrefix, failure });
    },
    /** A webhook body: the session paid (checkout.session.completed by default). */
    paidSessionEvent(sessionId: string, overrides: Record<string, unknown> = {}, type = 'checkout.session.completed') {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`the fake has no session ${sessionId}`);
      return event(type, { ...session, status: 'complete', payment_status: 'paid', ...overrides });
    },
    /** A webhook body: the item's subscription updated, the item as it is now. */
    subscriptionUpdatedEvent(itemId: string) {
      const item = items.get(itemId);
      if (!item) throw new Error(`the fake has no item ${itemId}`);
      return event('customer.subscription.updated', {
        id: item.subscription,
        object: 'subscription',
        status: 'active',
        items: { object: 'list', data: [{ ...item, metadata: { ...item.metadata } }], has_more: false },
      });
    },
    event,
    /** The Stripe-Signature header for a body, by the SDK's own test helper. */
    sign(payload: string, options: { timestamp?: number; secret?: string } = {}) {
      return Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: options.secret ?? FAKE_WEBHOOK_SECRET,
        timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
      });
    },
    /** Environment that points Gantry at this fake. */
    env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
      return {
        GANTRY_STRIPE_SECRET_KEY: FAKE_STRIPE_KEY,
        GANTRY_STRIPE_WEBHOOK_SECRET: FAKE_WEBHOOK_SECRET,
        GANTRY_STRIPE_API_URL: url,
        ...extra,
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type FakeStripe = Awaited<ReturnType<typeof startFakeStripe>>;
