import type { Plugin } from '@hapi/hapi';
import type { Kernel } from '../kernel.js';
import type { Services } from '../services.js';

/** What a domain's routes stand on: the kernel and the services (the app context is one). */
export interface PluginDeps {
  kernel: Kernel;
  services: Services;
}

/**
 * One domain's routes as a hapi plugin, registered with the deps as its options. The server
 * registers the API plugins under the API prefix (src/http/paths.ts), page plugins at the root.
 */
export type DomainPlugin = Plugin<PluginDeps>;
