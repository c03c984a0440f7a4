import type { PageForms } from '../../http/page-forms.js';
import { pageRoute } from '../../http/page-forms.js';
import { API } from '../../http/paths.js';
import type { PluginDeps } from '../../services.js';

export const AUTHORIZE_PATH = `${API}/oauth/authorize`;

/** Route options every OAuth page shares: no API authentication, errors answered as HTML. */
export const pageConfig = pageRoute('A sign-in or consent page');

/** What the OAuth page handlers share: the plugin's dependencies and the kernel's page forms. */
export interface PagesContext extends PageForms {
  app: PluginDeps;
}

export const pagesContext = (app: PluginDeps): PagesContext => ({ ...app.kernel.pageForms, app });
