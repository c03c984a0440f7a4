import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { ok, shape, timestamp } from '../http/openapi/declare.js';
import Joi from 'joi';

const wallet = shape({ balance: Joi.number(), currency: Joi.string(), updatedAt: timestamp().allow(null) });

export function walletRoutes(app: PluginDeps): ServerRoute[] {
  const { wallet: wallets } = app.services;
  return [
    {
      method: 'GET',
      path: '/wallet/me',
      // Third-party apps need wallet:read; first-party sessions always pass.
      options: { id: 'wallet.me', plugins: { gantry: { scope: 'wallet:read', responses: ok(wallet) } } },
      handler: async (request, h) => reply(request, h, await wallets.get(principalOf(request).userId)),
    },
  ];
}
