import { ConfigError, parseMinorUnits, parsePositive, parseUrl } from './config-values.js';

export interface BillingConfig {
  /** The Stripe provider; null when GANTRY_STRIPE_SECRET_KEY is unset (billing answers 503). */
  readonly stripe: {
    readonly secretKey: string;
    /** Signing secret of the webhook endpoint (whsec_...); null: the webhook answers 503. */
    readonly webhookSecret: string | null;
    /** Where the API is: Stripe's own, or a stand-in (tests). */
    readonly apiUrl: string;
  } | null;
  /** Top-up bounds, in minor units (cents) of the wallet currency. */
  readonly topUpMinAmount: number;
  readonly topUpMaxAmount: number;
  /** Seconds a signed webhook stays acceptable (Stripe's default tolerance is 300). */
  readonly webhookToleranceSec: number;
}

/** GANTRY_STRIPE_*; the key itself never appears in an error message. */
export function billingConfig(env: NodeJS.ProcessEnv): BillingConfig {
  const secretKey = env.GANTRY_STRIPE_SECRET_KEY || null;
  if (secretKey !== null && !/^(sk|rk)_(test|live)_[A-Za-z0-9_]+$/.test(secretKey))
    throw new ConfigError(
      'GANTRY_STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_test_..., sk_live_...)',
    );
  const min = parseMinorUnits('GANTRY_BILLING_TOPUP_MIN_AMOUNT', env.GANTRY_BILLING_TOPUP_MIN_AMOUNT || 500);
  const max = parseMinorUnits('GANTRY_BILLING_TOPUP_MAX_AMOUNT', env.GANTRY_BILLING_TOPUP_MAX_AMOUNT || 100_000);
  if (min > max)
    throw new ConfigError('GANTRY_BILLING_TOPUP_MIN_AMOUNT must not be above GANTRY_BILLING_TOPUP_MAX_AMOUNT');
  return Object.freeze({
    stripe:
      secretKey === null
        ? null
        : Object.freeze({
            secretKey,
            webhookSecret: env.GANTRY_STRIPE_WEBHOOK_SECRET || null,
            apiUrl: parseUrl('GANTRY_STRIPE_API_URL', env.GANTRY_STRIPE_API_URL || 'https://api.stripe.com'),
          }),
    topUpMinAmount: min,
    topUpMaxAmount: max,
    webhookToleranceSec: parsePositive(
      'GANTRY_STRIPE_WEBHOOK_TOLERANCE_SEC',
      env.GANTRY_STRIPE_WEBHOOK_TOLERANCE_SEC || 300,
    ),
  });
}
