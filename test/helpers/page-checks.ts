/// <reference lib="dom" />
// What every page a person sees must pass in a real browser, in the light and the dark scheme:
// the stylesheet applied under the strict CSP with no violation reported, and no serious or
// critical axe-core finding. A screenshot of each checked page and scheme is kept in
// test-results/pages/ (gitignored) for a person to look at.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';

export const SCREENSHOT_DIR = fileURLToPath(new URL('../../test-results/pages/', import.meta.url));

function axeSource(): string {
  const require = createRequire(import.meta.url);
  try {
    return readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  } catch (err) {
    throw new Error(`axe-core is missing (a devDependency: run npm ci): ${String(err)}`);
  }
}

interface AxeNode {
  target: string[];
  failureSummary?: string;
}
interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  helpUrl: string;
  nodes: AxeNode[];
}

/** Collects the CSP violations Chromium reports on a page (it logs each refused style or script). */
export function watchCsp(page: Page): string[] {
  const violations: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy/i.test(msg.text())) violations.push(msg.text());
  });
  return violations;
}

/**
 * axe-core is evaluated through the DevTools protocol, which the page's CSP does not govern, so
 * the page is checked exactly as a visitor gets it (an injected <script> would need the CSP off).
 */
export function pageChecker() {
  const source = axeSource();
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  /**
   * Checks the page as it is now, in the light scheme and in the dark one (`prefers-color-scheme`
   * emulated; docs/kernel.md, Pages), and leaves it light. The page is not reloaded: a state
   * reached by a form post is checked as it is.
   */
  return async function checkPage(page: Page, name: string, csp: string[]): Promise<void> {
    try {
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await checkScheme(page, scheme === 'light' ? name : `${name}-dark`, scheme, csp);
      }
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
  };

  async function checkScheme(page: Page, name: string, scheme: 'light' | 'dark', csp: string[]): Promise<void> {
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(background, BACKGROUND[scheme], `${name}: the stylesheet's ${scheme} palette is not applied`);
    assert.deepEqual(csp, [], `${name}: the browser reported CSP violations`);
    await page.screenshot({ path: `${SCREENSHOT_DIR}${name}.png`, fullPage: true });
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(source);
    const violations = (await page.evaluate(() =>
      (
        window as unknown as {
          axe: { run(ctx: Document, opts: object): Promise<{ violations: unknown[] }> };
        }
      ).axe
        .run(document, { resultTypes: ['violations'] })
        .then((r) => r.violations),
    )) as AxeViolation[];
    const grave = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    const report = grave
      .map(
        (v) =>
          `- ${v.id} (${v.impact}): ${v.help} ${v.helpUrl}\n${v.nodes
            .slice(0, 5)
            .map((n) => `    at ${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ')}`)
            .join('\n')}`,
      )
      .join('\n');
    assert.equal(grave.length, 0, `${name} (${page.url()}): axe-core found serious or critical problems:\n${report}`);
  }
}

/** The body's background in each scheme (src/http/page-style.ts, page-style-adapt.ts). */
const BACKGROUND = { light: 'rgb(245, 247, 250)', dark: 'rgb(17, 22, 29)' } as const;

/**
 * The element that has the focus: its tag, id and role, to assert where a page puts it. The
 * browser applies `autofocus` after the page has loaded, at its next rendering step: when an
 * element is marked autofocus, this waits for the focus to leave the body before reading.
 */
export async function focused(page: Page) {
  await page.waitForLoadState('load');
  await page.waitForFunction(() => {
    const marked = document.querySelector('[autofocus]');
    return !marked || document.activeElement !== document.body;
  });
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return { tag: el?.tagName.toLowerCase() ?? '', id: el?.id ?? '', role: el?.getAttribute('role') ?? '' };
  });
}
