import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PASSKEY_SCRIPT } from './passkey-script.js';

/** A script file of the pages, served under a name carrying its hash (so it is cached forever). */
export interface ScriptAsset {
  path: string;
  body: string;
}

const asset = (name: string, body: string): ScriptAsset => ({
  path: `/assets/${name}.${createHash('sha256').update(body).digest('hex').slice(0, 16)}.js`,
  body,
});

/**
 * @simplewebauthn/browser's own bundle (the UMD file that defines SimpleWebAuthnBrowser), read
 * from node_modules beside the program: the bundle of Gantry ships with its node_modules
 * (install.sh). The package exports only its module entry, so the file is found next to it.
 */
function webauthnLibrary(): string {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  return readFileSync(path.join(path.dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
}

/** The passkey pages' two scripts, and the `<head>` lines that load them (in order, deferred). */
export function createPasskeyAssets() {
  const library = asset('simplewebauthn-browser', webauthnLibrary());
  const script = asset('passkeys', PASSKEY_SCRIPT);
  return {
    files: [library, script] as const,
    head: `<script src="${library.path}" defer></script>\n<script src="${script.path}" defer></script>`,
  };
}

export type PasskeyAssets = ReturnType<typeof createPasskeyAssets>;
