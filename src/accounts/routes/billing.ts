import type { ServerRoute } from '@hapi/hapi';
import type { AppContext } from '../../app.js';
import { API } from '../../http/paths.js';
import { reply } from '../../http/envelope.js';
import { SIGNATURE_HEADER } from '../billing.js';

/** The billing provider's webhook: anonymous, authenticated by its HMAC signature over the raw body. */
export function billingRoutes(app: AppContext): ServerRoute[] {
  const { accounts } = app.services;
  return [
    {
      method: 'POST',
      path: `${API}/billing/webhook`,
      options: {
        id: 'billing.webhook',
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
