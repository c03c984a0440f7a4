import type { Brand } from '../config-brand.js';

/**
 * What every server-rendered page stands on (docs/kernel.md, Pages): one stylesheet served
 * under its hash, one document layout carrying the operator's brand, one CSP. The domains
 * write only their page's body.
 */
export interface PageView {
  title: string;
  body: string;
  /** Extra elements of <head> (the status page's feed link). */
  head?: string;
  /** The wide layout without a card (the status page). */
  wide?: boolean;
  /**
   * Where the focus starts (docs/kernel.md, Pages, Focus): the error summary (`role="alert"`)
   * when there is one, else the first empty field. On by default in the card layout; false
   * leaves the focus to the browser (the wide layout always does).
   */
  autofocus?: boolean;
}

export interface PageKit {
  readonly brand: Brand;
  /** `/assets/gantry.<hash>.css`: a new stylesheet is a new name, so it can be cached forever. */
  readonly stylesheetPath: string;
  readonly css: string;
  /** `/assets/icon.<hash>.svg`: the brand's monogram, the pages' icon when no logo is configured. */
  readonly iconPath: string;
  readonly icon: string;
  /**
   * The CSP of every page; `formActionSelf` where no form leads to another origin; `scripts`
   * where the page loads script files of this server (passkeys: script-src and connect-src 'self').
   */
  csp(options?: { formActionSelf?: boolean; scripts?: boolean }): string;
  document(view: PageView): string;
}
