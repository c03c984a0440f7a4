/// <reference lib="dom" />
// What every page a person sees must pass in a real browser: the stylesheet applied under the
// strict CSP with no violation reported, and no serious or critical axe-core finding. A
// screenshot of each checked page is kept in test-results/pages/ (gitignored) for a person to look at.
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
  return async function checkPage(page: Page, name: string, csp: string[]): Promise<void> {
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(background, 'rgb(245, 247, 250)', `${name}: the stylesheet is not applied`);
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
  };
}
