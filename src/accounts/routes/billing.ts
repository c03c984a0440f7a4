import { responses as R } from '../schemas.js';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../http/plugin.js';
import { reply } from '../../http/envelope.js';
import { SIGNATURE_HEADER } from '../billing.js';

/** The billing provider's webhook: anonymous, authenticated by its HMAC signature over the raw body. */
export function billingRoutes(app: PluginDeps): ServerRoute[] {
  const { accounts } = app.services;
  return [
    {
      method: 'POST',
      path: '/billing/webhook',
      options: {
        id: 'billing.webhook',
        plugins: {
          gantry: {
            responses: R.billingWebhook,
            errors: ['UNAUTHORIZED', 'NOT_FOUND', 'NOT_CONFIGURED'],
            requestBody: { type: 'application/json' },
          },
        },
        auth: false,
        payload: { parse: false, output: 'data', maxBytes: 64 * 1024 },
      },
      handler: async (request, h) => {
        const raw = Buffer.isBuffer(request.payload) ? request.payload : Buffer.from(String(request.payload ?? ''));
        const header = request.headers[SIGNATURE_HEADER] as string | undefined;
        return reply(request, h, await accounts.billingWebhook.receive(raw, header));
      },
    },
  ];
}
