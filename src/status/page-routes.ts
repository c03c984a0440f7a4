import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { PluginDeps } from '../services.js';
import { apiUrl } from '../http/paths.js';
import { htmlErrorFormat } from '../http/pages.js';
import { renderStatusPage } from './page.js';
import { renderHistoryPage, renderIncidentPage } from './incident-page.js';
import { renderIncidentFeed } from './feed.js';
import { serving } from './routes.js';
import { idParams, responses } from './schemas.js';

const HTML = 'text/html; charset=utf-8';
// Unknown query keys pass (cache busters from proxies); the answer does not depend on them.
const historyQuery = Joi.object({ page: Joi.number().integer().min(1).max(1_000_000).default(1) }).unknown(true);

/**
 * The status pages and the Atom feed (at the root, not under the API prefix): prepared answers
 * of the projection with their validators, like the JSON (docs/status.md, Pages).
 */
export function statusPageRoutes(app: PluginDeps): ServerRoute[] {
  const { config, pages } = app.kernel;
  const { serve, options } = serving(app);
  const pageUrl = `${config.publicUrl}/status`;
  const feedUrl = `${pageUrl}/feed.atom`;
  // The pages' strict CSP (docs/kernel.md, Pages): a page loads its stylesheet and nothing else.
  const withCsp =
    (handler: (request: Request, h: ResponseToolkit) => Promise<ReturnType<ResponseToolkit['response']>>) =>
    async (request: Request, h: ResponseToolkit) =>
      (await handler(request, h)).header('Content-Security-Policy', pages.csp());
  const html = { errorFormat: htmlErrorFormat };

  return [
    {
      method: 'GET',
      path: '/status',
      options: options('status.page', responses.page, { gantry: html }),
      handler: withCsp(
        serve(
          () => 'page',
          () => (model) => ({
            body: renderStatusPage(model, pages, feedUrl, apiUrl(config.publicUrl, '/status')),
            contentType: HTML,
          }),
          'Page',
        ),
      ),
    },
    {
      method: 'GET',
      path: '/status/incidents/{id}',
      // A malformed id names no incident: the page's 404, like an unknown one.
      options: options('status.incident-page', responses.page, {
        validate: { params: idParams },
        gantry: { ...html, invalidParamsStatus: 404 },
      }),
      handler: withCsp(
        serve(
          (r) => `incident-page:${String(r.params.id).toLowerCase()}`,
          (r) => (model) => {
            const incident = model.incidentsById.get(String(r.params.id).toLowerCase());
            return incident ? { body: renderIncidentPage(model, incident, pages), contentType: HTML } : null;
          },
          'Incident',
        ),
      ),
    },
    {
      method: 'GET',
      path: '/status/history',
      options: options('status.history', responses.page, { validate: { query: historyQuery }, gantry: html }),
      handler: withCsp(
        serve(
          (r) => `history:${r.query.page}`,
          (r) => (model) => {
            const body = renderHistoryPage(model, r.query.page as number, pages);
            return body === null ? null : { body, contentType: HTML };
          },
          'Page of the history',
        ),
      ),
    },
    {
      method: 'GET',
      path: '/status/feed.atom',
      options: options('status.feed', responses.feed),
      handler: serve(
        () => 'feed',
        () => (model) => ({
          body: renderIncidentFeed(model, pageUrl, feedUrl, config.brand.name),
          contentType: 'application/atom+xml; charset=utf-8',
        }),
        'Feed',
      ),
    },
  ];
}
