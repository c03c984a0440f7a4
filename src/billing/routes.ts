import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { PluginDeps } from '../services.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { tenancyHeaders } from '../accounts/access.js';
import { checkoutResponses, webhookResponses } from './schemas.js';

/** Top-up body: amount in minor units (an integer, never a string or a fraction), optional currency. */
const checkoutBody = Joi.object({
  amount: Joi.number().integer().strict().min(1).max(Number.MAX_SAFE_INTEGER).required(),
  currency: Joi.string()
    .pattern(/^[A-Za-z]{3}$/)
    .messages({ 'string.pattern.base': '{{#label}} must be a three-letter ISO 4217 code' }),
});

export function billingRoutes(app: PluginDeps): ServerRoute[] {
  const { billing } = app.services;
  return [
    {
      method: 'POST',
      path: '/billing/checkout',
      options: {
        id: 'billing.checkout',
        validate: { payload: checkoutBody },
        plugins: {
          gantry: {
            rateLimit: { limit: 5, windowSec: 60 },
            responses: checkoutResponses,
            // No provider configured; the X-Account-Id account not the caller's; Stripe refused.
            errors: ['NOT_CONFIGURED', 'FORBIDDEN', 'NOT_FOUND', 'UPSTREAM_FAILED'],
          },
        },
      },
      handler: async (request, h) => {
        const { accountId } = tenancyHeaders(request.headers as Record<string, string | undefined>);
        const body = request.payload as { amount: number; currency?: string };
        return reply(request, h, await billing.checkout(principalOf(request), accountId ?? null, body), {
          status: 201,
        });
      },
    },
    {
      method: 'POST',
      path: '/billing/webhooks/stripe',
      options: {
        id: 'billing.webhook.stripe',
        // Authenticated by the Stripe-Signature header over the exact bytes: hapi must not parse them.
        auth: false,
        payload: { parse: false, output: 'data', maxBytes: 512 * 1024 },
        // Stripe delivers from a few addresses, in bursts; verifying a signature is cheap.
        plugins: {
          gantry: {
            rateLimit: { limit: 1200, windowSec: 60 },
            responses: webhookResponses,
            errors: ['NOT_CONFIGURED'],
            // Read raw (the signature covers the bytes): a Stripe event in JSON.
            requestBody: { type: 'application/json' },
          },
        },
      },
      handler: async (request, h) => {
        const raw = Buffer.isBuffer(request.payload) ? request.payload : Buffer.from(String(request.payload ?? ''));
        const signature = request.headers['stripe-signature'] as string | undefined;
        return reply(request, h, await billing.webhook.receive('stripe', raw, signature));
      },
    },
  ];
}
