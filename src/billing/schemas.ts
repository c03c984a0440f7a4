import Joi from 'joi';
import { created, ok, shape, timestamp } from '../http/openapi/declare.js';

/** POST /billing/checkout (docs/billing.md): the Checkout session to send the user to. */
export const checkoutResponses = created(
  shape({
    checkoutUrl: Joi.string(),
    sessionId: Joi.string(),
    expiresAt: timestamp(),
    amount: Joi.number().integer(),
    currency: Joi.string(),
  }),
);

/** POST /billing/webhooks/stripe (docs/billing.md): received, once; a redelivery is a duplicate. */
export const webhookResponses = ok(
  shape({ received: Joi.valid(true), duplicate: Joi.boolean(), applied: Joi.boolean() }),
);
