// Launches the browser the page tests drive. A browser that cannot be found or launched fails
// the test with the reason: these tests never skip.
import { chromium, type Browser } from 'playwright-core';
import { chromiumPath } from './chromium-path.mjs';

/** No sandbox (tests run as root in CI), and nothing that calls home on a closed network. */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export async function launchBrowser(): Promise<Browser> {
  const executablePath = await chromiumPath();
  try {
    return await chromium.launch({ executablePath, args: ARGS, headless: true });
  } catch (err) {
    throw new Error(`Chromium at ${executablePath} could not be launched: ${String(err)}`);
  }
}
