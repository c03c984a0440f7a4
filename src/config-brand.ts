import { ConfigError } from './config-values.js';

export interface Brand {
  readonly name: string;
  /** An https URL, or a path on this server (starting with one slash); null: the name alone. */
  readonly logoUrl: string | null;
}

/**
 * GANTRY_BRAND_NAME and GANTRY_BRAND_LOGO_URL. The logo is fetched by every visitor's browser
 * and named in the pages' CSP img-src, so only https (or a path on Gantry's own origin) is
 * accepted: plain http would be mixed content and lets anyone on the path swap the picture.
 */
export function parseBrand(env: NodeJS.ProcessEnv, publicUrl: string): Brand {
  const name = (env.GANTRY_BRAND_NAME ?? '').trim() || 'Gantry';
  if (name.length > 60 || /[\u0000-\u001f]/.test(name))
    throw new ConfigError(`GANTRY_BRAND_NAME must be one line of at most 60 characters (got "${name}")`);
  const raw = (env.GANTRY_BRAND_LOGO_URL ?? '').trim();
  if (!raw) return Object.freeze({ name, logoUrl: null });
  const bad = () =>
    new ConfigError(`GANTRY_BRAND_LOGO_URL must be an https URL or a path starting with / (got "${raw}")`);
  if (raw.startsWith('/') && !raw.startsWith('//')) {
    if (/[\s"'<>\\]/.test(raw)) throw bad();
    return Object.freeze({ name, logoUrl: raw });
  }
  const url = URL.canParse(raw) ? new URL(raw) : null;
  const sameOrigin = url?.origin === new URL(publicUrl).origin;
  if (!url || (url.protocol !== 'https:' && !sameOrigin) || url.username || url.password) throw bad();
  return Object.freeze({ name, logoUrl: url.href });
}
