import { htmlPage, PAGE_ERRORS } from '../../http/openapi/declare.js';
import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { PluginDeps } from '../../http/plugin.js';
import { htmlErrorFormat } from '../../http/pages.js';
import type { PageView } from '../../http/pages.js';
import { API } from '../../http/paths.js';
import { randomToken } from '../../lib/crypto.js';
import { PRE_SESSION_COOKIE } from '../browser-sessions.js';

export const AUTHORIZE_PATH = `${API}/oauth/authorize`;
export const PRE_SESSION_TTL_SEC = 30 * 60;

/** Route options every page shares: no API authentication, errors answered as HTML. */
export const pageConfig = {
  auth: false as const,
  plugins: {
    gantry: { errorFormat: htmlErrorFormat, responses: htmlPage('A sign-in or consent page'), errors: PAGE_ERRORS },
  },
};

export function cookie(request: Request, name: string): string | null {
  const header = request.headers.cookie as string | undefined;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : null;
    }
  }
  return null;
}

/** A string field of a submitted form. */
export const formField = (body: Record<string, unknown>, name: string): string | undefined =>
  typeof body[name] === 'string' ? (body[name] as string) : undefined;

/**
 * Login and consent pages may not be framed (clickjacking, RFC 9700 4.7) nor cached: the
 * kernel's page headers. No form-action directive: browsers apply it to the redirect that
 * follows the consent POST, which goes to the client's origin.
 */
export function page(h: ResponseToolkit, view: PageView, status = 200): ResponseObject {
  return h.page(view, { status }).header('Pragma', 'no-cache');
}

export function redirect(h: ResponseToolkit, location: string, status = 302): ResponseObject {
  return h.response().code(status).header('Location', location).header('Cache-Control', 'no-store');
}

/** What the page handlers share: the plugin's dependencies and the pages' cookies. */
export interface PagesContext {
  app: PluginDeps;
  /** Attributes of the pages' cookies (Secure when the public URL is https). */
  attrs(maxAge: number): string;
  /** The pre-session cookie the sign-in CSRF value is bound to (set when missing). */
  preSession(request: Request): { value: string; setCookie: string | null };
}

export function pagesContext(app: PluginDeps): PagesContext {
  const secure = app.kernel.config.publicUrl.startsWith('https:');
  const attrs = (maxAge: number) => `Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  return {
    app,
    attrs,
    preSession(request) {
      const existing = cookie(request, PRE_SESSION_COOKIE);
      if (existing) return { value: existing, setCookie: null };
      const value = randomToken(24);
      return { value, setCookie: `${PRE_SESSION_COOKIE}=${value}; ${attrs(PRE_SESSION_TTL_SEC)}` };
    },
  };
}
