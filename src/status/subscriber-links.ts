import type { Kernel } from '../kernel.js';
import { hmacSha256, safeEqual } from '../lib/crypto.js';
import { isUuid } from '../lib/ids.js';

/**
 * The links a subscriber's mails carry. The unsubscribe link is the subscription id with an
 * HMAC of it under a key derived from the signing key: every mail can carry it without storing
 * a secret per subscriber, it cannot be made for another id, and it works as long as the
 * subscription exists (RFC 8058 asks for a link that keeps working).
 */
export interface SubscriberLinks {
  confirmUrl(token: string): string;
  unsubscribeUrl(subscriptionId: string): string;
  /** The subscription an unsubscribe token names, or null when it is malformed or forged. */
  unsubscribeId(token: string): string | null;
}

export const CONFIRM_PATH = '/status/subscriptions/confirm';
export const UNSUBSCRIBE_PATH = '/status/unsubscribe';

export function subscriberLinks(kernel: Pick<Kernel, 'config' | 'secrets'>): SubscriberLinks {
  const key = hmacSha256(kernel.secrets.jwtSigningKey, 'gantry status unsubscribe v1');
  const mac = (id: string) => hmacSha256(key, `unsubscribe|${id}`).toString('base64url');
  const base = kernel.config.publicUrl;
  return {
    confirmUrl: (token) => `${base}${CONFIRM_PATH}?token=${encodeURIComponent(token)}`,
    unsubscribeUrl: (id) => `${base}${UNSUBSCRIBE_PATH}?token=${id}.${mac(id)}`,
    unsubscribeId(token) {
      const dot = token.indexOf('.');
      const id = token.slice(0, dot);
      if (dot < 0 || !isUuid(id)) return null;
      return safeEqual(token.slice(dot + 1), mac(id)) ? id.toLowerCase() : null;
    },
  };
}
