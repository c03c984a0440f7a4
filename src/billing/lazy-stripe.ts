import type { BillingConfig } from '../config-billing.js';
import type { Logger } from '../lib/logger.js';
import type { BillingProvider } from './provider.js';

/**
 * The Stripe provider with its SDK loaded on first use: a server that takes no payment does not
 * keep the SDK in memory (docs/operations.md, Memory). Its name and webhook setting come from
 * the configuration, so nothing is loaded to answer them.
 */
export function lazyStripeProvider(
  stripeConfig: NonNullable<BillingConfig['stripe']>,
  toleranceSec: number,
  logger: Logger,
): BillingProvider {
  let loaded: Promise<BillingProvider> | null = null;
  const sdk = () =>
    (loaded ??= import('./stripe.js').then((mod) => mod.createStripeProvider(stripeConfig, toleranceSec, logger)));
  return {
    name: 'stripe',
    receivesWebhooks: stripeConfig.webhookSecret !== null,
    createTopUpCheckout: async (input) => (await sdk()).createTopUpCheckout(input),
    lowerSeatQuantity: async (input) => (await sdk()).lowerSeatQuantity(input),
    verifyWebhook: async (rawBody, signature, now) => (await sdk()).verifyWebhook(rawBody, signature, now),
  };
}
