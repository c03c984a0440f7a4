import type { ServerRoute } from '@hapi/hapi';
import type { AppContext } from '../app.js';
import { API } from '../http/paths.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';

export function walletRoutes(app: AppContext): ServerRoute[] {
  const { wallet } = app.services;
  return [
    {
      method: 'GET',
      path: `${API}/wallet/me`,
      // Third-party apps need wallet:read; first-party sessions always pass.
      options: { id: 'wallet.me', plugins: { gantry: { scope: 'wallet:read' } } },
      handler: async (request, h) => reply(request, h, await wallet.get(principalOf(request).userId)),
    },
  ];
}
