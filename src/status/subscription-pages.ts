import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import { htmlPage, PAGE_ERRORS } from '../http/openapi/declare.js';
import { cookie, formField, messagePage, PRE_SESSION_COOKIE, redirect } from '../http/page-forms.js';
import type { PageView } from '../http/page-kit.js';
import { htmlErrorFormat } from '../http/pages.js';
import { rateLimitBucket, rateLimitHeaders, type RateDecision } from '../http/rate-limit.js';
import type { RateLimitRule } from '../http/route-config.js';
import { SUBSCRIBE_PAGE } from './page.js';
import { subscribeBody, SUBSCRIBE_LIMIT } from './schemas.js';
import { CONFIRM_PATH, UNSUBSCRIBE_PATH } from './subscriber-links.js';
import * as views from './subscription-views.js';
import type { SubscribeFormValues } from './subscription-views.js';

const SENT_PAGE = `${SUBSCRIBE_PAGE}/sent`;
const CONFIRMED_PAGE = '/status/subscriptions/confirmed';
const UNSUBSCRIBED_PAGE = '/status/unsubscribed';
const CSRF_PURPOSE = 'status-subscribe';
/** Links from mails: their secrets cannot be guessed; this only bounds a caller's noise. */
const LINK_LIMIT: RateLimitRule = { limit: 20, windowSec: 60 };

const pageOptions = (id: string, description: string, rateLimit: RateLimitRule | false) => ({
  id,
  auth: false as const,
  plugins: {
    gantry: {
      errorFormat: htmlErrorFormat,
      responses: htmlPage(description),
      // The form counts its budget itself (shared with the API): its 429 is a page too.
      errors: [...PAGE_ERRORS, 'RATE_LIMIT_EXCEEDED' as const],
      rateLimit,
    },
  },
});
const formPayload = { allow: ['application/x-www-form-urlencoded'], maxBytes: 16 * 1024 };

/** A page of these forms, which post only to this server: form-action 'self' on top of the page CSP. */
const page = (h: ResponseToolkit, view: PageView, status = 200) =>
  h.page(view, { status, formActionSelf: true }).header('Pragma', 'no-cache');

/** A form field that may come once or several times (checkboxes). */
const many = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v): v is string => typeof v === 'string');

/**
 * The subscription pages (docs/status.md, Subscriptions), on both listeners. The form is
 * bound to the reader's browser (the page kit's pre-session and CSRF value) and spends the
 * same per-address budget as the API; every answer to a post is a redirect to a page (PRG),
 * except the webhook's, whose secret can be shown only once and never in a URL. Links from
 * mails show a button on GET (mail scanners open links) and act on POST.
 */
export function subscriptionPageRoutes(app: PluginDeps): ServerRoute[] {
  const { status } = app.services;
  const forms = app.kernel.pageForms;
  const brand = app.kernel.config.brand.name;

  async function showForm(request: Request, h: ResponseToolkit, values: SubscribeFormValues, code = 200) {
    const pre = forms.preSession(request);
    const model = await status.projection.current();
    const res = page(h, views.subscribeForm(model, brand, forms.csrfFor(pre.value, CSRF_PURPOSE), values), code);
    if (pre.setCookie) res.header('Set-Cookie', pre.setCookie, { append: true });
    return res;
  }

  async function submit(request: Request, h: ResponseToolkit) {
    const body = (request.payload ?? {}) as Record<string, unknown>;
    const email = (formField(body, 'email') ?? '').trim();
    const webhookUrl = (formField(body, 'webhookUrl') ?? '').trim();
    const componentIds = many(body.component);
    const values: SubscribeFormValues = { email, webhookUrl, componentIds };
    if (!forms.csrfMatches(cookie(request, PRE_SESSION_COOKIE), CSRF_PURPOSE, body.csrf))
      return showForm(
        request,
        h,
        {
          ...values,
          error: { field: 'form', message: 'This form has expired or was not sent from this page. Try again.' },
        },
        403,
      );
    // This form is another door to POST /api/v1/status/subscriptions: it spends the same budget.
    const spent = await app.kernel.limiter.charge(rateLimitBucket('status.subscribe', request), SUBSCRIBE_LIMIT);
    if (!spent.allowed) {
      (request.app as { rateLimit?: RateDecision }).rateLimit = spent;
      const wait = rateLimitHeaders(spent, app.kernel.clock.now().getTime())['Retry-After'] as string;
      return (
        await showForm(
          request,
          h,
          {
            ...values,
            error: {
              field: 'form',
              message: `Too many subscriptions from here. Try again in ${Math.ceil(Number(wait) / 60)} minutes.`,
            },
          },
          429,
        )
      ).header('Retry-After', wait);
    }
    // Enter in the webhook field submits with the first button: the field that was filled decides.
    const kind = body.kind === 'webhook' || (!email && webhookUrl) ? 'webhook' : 'email';
    const field = kind === 'webhook' ? 'webhookUrl' : 'email';
    const input = kind === 'webhook' ? { webhookUrl, componentIds } : { email, componentIds };
    if (!input[field as keyof typeof input])
      return showForm(
        request,
        h,
        {
          ...values,
          error: { field, message: kind === 'webhook' ? 'Enter the webhook URL.' : 'Enter your email address.' },
        },
        400,
      );
    const checked = subscribeBody.validate(
      componentIds.length > 0 ? input : { [field]: input[field as keyof typeof input] },
    );
    if (checked.error) {
      const detail = checked.error.details[0];
      const which = String(detail.path[0]) === 'componentIds' ? 'componentIds' : field;
      return showForm(
        request,
        h,
        { ...values, error: { field: which, message: `${detail.message.replace(/^"[^"]+" /, 'This ')}.` } },
        400,
      );
    }
    try {
      const result = await status.subscribe(checked.value);
      if (result.type === 'email') return redirect(h, SENT_PAGE, 303);
      return page(h, views.webhookAddedPage(result.webhookUrl, result.secret));
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      const details = err.details as Array<{ field?: string }> | undefined;
      const which = details?.[0]?.field === 'componentIds' ? 'componentIds' : err.status === 429 ? 'form' : field;
      const res = await showForm(request, h, { ...values, error: { field: which, message: err.message } }, err.status);
      for (const [name, value] of Object.entries(err.headers ?? {})) res.header(name, value);
      return res;
    }
  }

  const token = (request: Request) => (typeof request.query.token === 'string' ? request.query.token.trim() : '');
  const incomplete = (h: ResponseToolkit, title: string) =>
    page(h, messagePage(title, 'This link is incomplete or damaged. Open the link from the mail again.'), 400);

  return [
    {
      method: 'GET',
      path: SUBSCRIBE_PAGE,
      options: pageOptions('status.subscribe-page', 'The subscribe form', false),
      handler: (request, h) => showForm(request, h, { email: '', webhookUrl: '', componentIds: [] }),
    },
    {
      method: 'POST',
      path: SUBSCRIBE_PAGE,
      options: {
        ...pageOptions('status.subscribe-page.submit', 'Subscribed: on to the next page, or the form again', false),
        payload: formPayload,
      },
      handler: submit,
    },
    {
      method: 'GET',
      path: SENT_PAGE,
      options: pageOptions('status.subscribe-sent', 'A confirmation mail is on its way', false),
      handler: (_request, h) => page(h, views.confirmationSentPage()),
    },
    {
      method: 'GET',
      path: CONFIRM_PATH,
      options: pageOptions('status.confirm-page', 'The confirmation link: a button that confirms', LINK_LIMIT),
      handler: (request, h) =>
        token(request)
          ? page(h, views.confirmPage(CONFIRM_PATH, token(request)))
          : incomplete(h, 'Confirm your subscription'),
    },
    {
      method: 'POST',
      path: CONFIRM_PATH,
      options: {
        ...pageOptions('status.confirm-page.submit', 'Confirmed: on to the confirmed page', LINK_LIMIT),
        payload: formPayload,
      },
      handler: async (request, h) => {
        const value = (formField((request.payload ?? {}) as Record<string, unknown>, 'token') ?? '').trim();
        if (!value) return incomplete(h, 'Confirm your subscription');
        try {
          await status.confirmSubscription(value);
        } catch (err) {
          if (!(err instanceof DomainError) || err.status >= 500) throw err;
          return page(h, messagePage('Confirm your subscription', err.message), err.status);
        }
        return redirect(h, CONFIRMED_PAGE, 303);
      },
    },
    {
      method: 'GET',
      path: CONFIRMED_PAGE,
      options: pageOptions('status.confirmed', 'The subscription is confirmed', false),
      handler: (_request, h) => page(h, views.confirmedPage()),
    },
    {
      method: 'GET',
      path: UNSUBSCRIBE_PATH,
      options: pageOptions('status.unsubscribe-page', 'The unsubscribe link: a button that unsubscribes', LINK_LIMIT),
      handler: (request, h) =>
        status.links.unsubscribeId(token(request))
          ? page(h, views.unsubscribePage(UNSUBSCRIBE_PATH, token(request)))
          : incomplete(h, 'Unsubscribe'),
    },
    {
      method: 'POST',
      path: UNSUBSCRIBE_PATH,
      options: {
        ...pageOptions('status.unsubscribe', "Unsubscribed (RFC 8058 one-click, or the page's button)", LINK_LIMIT),
        // RFC 8058 section 3.1: the mail client POSTs "List-Unsubscribe=One-Click", as a form
        // in either encoding; the link itself carries the token.
        payload: {
          ...formPayload,
          allow: [...formPayload.allow, 'multipart/form-data'],
          multipart: { output: 'data' as const },
        },
      },
      handler: async (request, h) => {
        const body = (request.payload ?? {}) as Record<string, unknown>;
        try {
          await status.unsubscribe(token(request));
        } catch (err) {
          if (err instanceof DomainError && err.status === 400) return incomplete(h, 'Unsubscribe');
          throw err;
        }
        // A mail client's one-click POST gets the answer itself; a person's button, the next page.
        return formField(body, 'List-Unsubscribe') === 'One-Click'
          ? page(h, views.unsubscribedPage())
          : redirect(h, UNSUBSCRIBED_PAGE, 303);
      },
    },
    {
      method: 'GET',
      path: UNSUBSCRIBED_PAGE,
      options: pageOptions('status.unsubscribed', 'The subscription is gone', false),
      handler: (_request, h) => page(h, views.unsubscribedPage()),
    },
  ];
}
