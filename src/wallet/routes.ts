import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../http/plugin.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';

export function walletRoutes(app: PluginDeps): ServerRoute[] {
  const { wallet } = app.services;
  return [
    {
      method: 'GET',
      path: '/wallet/me',
      // Third-party apps need wallet:read; first-party sessions always pass.
      options: { id: 'wallet.me', plugins: { gantry: { scope: 'wallet:read' } } },
      handler: async (request, h) => reply(request, h, await wallet.get(principalOf(request).userId)),
    },
  ];
}
