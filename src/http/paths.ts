/** Every versioned JSON endpoint lives under this prefix; discovery and pages live at the root. */
export const API = '/api/v1';
