/** Every versioned JSON endpoint lives under this prefix; discovery and pages live at the root. */
export const API = '/api/v1';

/** The absolute URL of an API path under the public base URL (token audience, redirect URIs, links). */
export const apiUrl = (publicUrl: string, path = '') => `${publicUrl}${API}${path}`;
