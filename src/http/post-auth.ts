import type { Lifecycle, Plugin, Request, RouteOptions, RouteSettings, Server, ServerRoute } from '@hapi/hapi';
import type { Principal, SchemeCount } from './auth.js';
import { checkPayloadDepth } from './payload-depth.js';
import type { RateLimitCount } from './rate-limit.js';

/** What createServer installs: the step, the scheme's share of the counting, the plugin wrapper. */
interface PostAuthSteps {
  /** For the bearer scheme: counts the routes that have no step (an authenticated GET). */
  countInScheme: SchemeCount;
  /** A plugin whose routes get the step as the server's own do. */
  plugin<T>(plugin: Plugin<T>): Plugin<T>;
  /** Throws at start-up when a route has neither the step nor the scheme to count it. */
  assertCovered(server: Server): void;
}

/** A route only an authenticated caller of the `bearer` strategy reaches, with no body: as declared. */
function declaredAuthenticatedGet(route: ServerRoute): boolean {
  if ([route.method].flat().some((method) => method.toUpperCase() !== 'GET')) return false;
  const options = route.options ?? (route as { config?: unknown }).config;
  if (typeof options === 'function') return false;
  const auth = (options as RouteOptions | undefined)?.auth;
  if (auth === undefined || auth === 'bearer') return true;
  if (auth === false || typeof auth === 'string') return false;
  const strategies = auth.strategies ?? (auth.strategy ? [auth.strategy] : ['bearer']);
  return (auth.mode ?? 'required') === 'required' && strategies.length === 1 && strategies[0] === 'bearer';
}

/** The same, as hapi settled it (its default strategy is `bearer`, required). */
function settledAuthenticatedGet(method: string, settings: RouteSettings): boolean {
  if (method !== 'get') return false;
  const auth = settings.auth as { strategies?: string[]; mode?: string } | false | undefined | null;
  if (auth === undefined || auth === null) return true;
  return auth !== false && auth.mode === 'required' && auth.strategies?.length === 1 && auth.strategies[0] === 'bearer';
}

/**
 * The kernel's step after authentication: the rate limit, then the body's depth, in one step
 * (hapi awaits every step of every request: two cost measurably more than one). It is a step of
 * each route rather than of the server, so that an authenticated GET, the polled hot path,
 * has none: it has no body, and the bearer scheme counts it as it accepts the caller
 * (docs/kernel.md, Rate limits). Every route declared through the server or a plugin wrapped
 * here gets the step unless it is such a GET; assertCovered checks the outcome on hapi's own
 * settings, so that a route added another way cannot go uncounted.
 */
export function installPostAuthSteps(server: Server, count: RateLimitCount): PostAuthSteps {
  const step: Lifecycle.Method = (request, h) => {
    const counted = count(request);
    if (counted)
      return counted.then(() => {
        checkPayloadDepth(request);
        return h.continue;
      });
    checkPayloadDepth(request);
    return h.continue;
  };
  const hasStep = (settings: RouteSettings) =>
    [settings.ext?.onPostAuth ?? []].flat().some((event) => [event.method].flat().includes(step));
  // Settings of the routes without the step (filled as hapi creates each route).
  const countedByScheme = new WeakSet<RouteSettings>();
  server.events.on('route', (route) => {
    if (!hasStep(route.settings)) countedByScheme.add(route.settings);
  });

  const withStep = (route: ServerRoute): ServerRoute => {
    if (declaredAuthenticatedGet(route)) return route;
    const key = route.options === undefined && 'config' in route ? 'config' : 'options';
    const attach = (options: RouteOptions = {}): RouteOptions => ({
      ...options,
      ext: { ...options.ext, onPostAuth: [{ method: step }, ...[options.ext?.onPostAuth ?? []].flat()] },
    });
    const declared = (route as unknown as Record<string, unknown>)[key] as ServerRoute['options'];
    return {
      ...route,
      [key]: typeof declared === 'function' ? (s: Server) => attach(declared.call(s, s)) : attach(declared),
    };
  };
  const wrapRoutes = (target: Server) => {
    const route = target.route.bind(target);
    target.route = ((routes: ServerRoute | ServerRoute[]) => route([routes].flat().map(withStep))) as Server['route'];
  };
  wrapRoutes(server);

  return {
    countInScheme: (request: Request, principal: Principal) =>
      countedByScheme.has(request.route.settings) ? count(request, principal) : undefined,
    plugin: (plugin) => ({
      ...plugin,
      register(target, options) {
        wrapRoutes(target);
        return plugin.register(target, options);
      },
    }),
    assertCovered(target) {
      for (const route of target.table()) {
        if (hasStep(route.settings) || settledAuthenticatedGet(route.method, route.settings)) continue;
        throw new Error(`route ${route.method.toUpperCase()} ${route.path} has no rate limit step`);
      }
    },
  };
}
