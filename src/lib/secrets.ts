import { chmodSync, existsSync, linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ConfigError } from '../config.js';

/** One AES-256 key of the credential keyring; `id` is stored beside every ciphertext. */
interface CredentialKey {
  id: string;
  key: string; // base64, 32 bytes
}

export interface SecretsFile {
  jwtSigningKey: string; // base64, 32 bytes (HS256)
  cursorSigningKey: string; // base64, 32 bytes (HMAC of pagination cursors and other opaque state)
  credentialKeys: CredentialKey[];
  activeCredentialKeyId: string;
}

/** Secrets as the process uses them: raw key bytes, never logged. */
export interface Secrets {
  jwtSigningKey: Buffer;
  cursorSigningKey: Buffer;
  credentialKeys: Map<string, Buffer>;
  activeCredentialKeyId: string;
  /**
   * Several nodes (PostgreSQL): GANTRY_SECRET_CREDENTIAL_KEY, which seals the keyring's other
   * keys in the database (src/lib/keyring.ts); null on SQLite, whose keyring is secrets.json.
   */
  keyEncryptionKey: Buffer | null;
}

/** The keys every node of a cluster must be given, identically (docs/postgres.md, Secrets). */
const SHARED_KEYS = ['GANTRY_SECRET_JWT_KEY', 'GANTRY_SECRET_CURSOR_KEY', 'GANTRY_SECRET_CREDENTIAL_KEY'] as const;

const key32 = (): string => randomBytes(32).toString('base64');

function decodeKey(name: string, value: string): Buffer {
  const buf = Buffer.from(value, 'base64');
  if (buf.length !== 32) throw new ConfigError(`${name} must be 32 bytes, base64-encoded`);
  return buf;
}

function secretsPath(dataDir: string): string {
  return path.join(dataDir, 'secrets.json');
}

/** Writes atomically with mode 0600: the file holds every key of the appliance. */
export function writeSecretsFile(dataDir: string, file: SecretsFile): void {
  const target = secretsPath(dataDir);
  const temp = `${target}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, target);
}

/**
 * First start: a fresh secrets.json, created exclusively (link() fails when the file exists),
 * so of two processes starting at once one writes it and both use the same keys.
 */
function createSecretsFile(dataDir: string): SecretsFile {
  const fresh: SecretsFile = {
    jwtSigningKey: key32(),
    cursorSigningKey: key32(),
    credentialKeys: [{ id: 'k1', key: key32() }],
    activeCredentialKeyId: 'k1',
  };
  const target = secretsPath(dataDir);
  const temp = `${target}.${process.pid}.new`;
  writeFileSync(temp, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  try {
    linkSync(temp, target);
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readSecretsFile(dataDir)!;
  } finally {
    unlinkSync(temp);
  }
}

export function readSecretsFile(dataDir: string): SecretsFile | null {
  const file = secretsPath(dataDir);
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as SecretsFile;
  } catch {
    throw new ConfigError(`${file} is not valid JSON; restore it from a backup`);
  }
}

/**
 * Several nodes on one database (PostgreSQL): the three keys come from the environment, the
 * same on every node; a node never makes its own, which would sign tokens and cursors and
 * seal values no other node accepts. A secrets.json already in the data directory only adds
 * the credential keys it holds (values sealed before the move to PostgreSQL).
 */
function loadSharedSecrets(dataDir: string, env: NodeJS.ProcessEnv): Secrets {
  const missing = SHARED_KEYS.filter((name) => !env[name]);
  if (missing.length > 0)
    throw new ConfigError(
      `on PostgreSQL every node needs the same ${missing.join(', ')} (base64, 32 bytes each; docs/postgres.md, Secrets)`,
    );
  const file = readSecretsFile(dataDir);
  const credentialKeys = new Map(
    (file?.credentialKeys ?? []).map((k) => [k.id, decodeKey(`credential key ${k.id}`, k.key)]),
  );
  const kek = decodeKey('GANTRY_SECRET_CREDENTIAL_KEY', env.GANTRY_SECRET_CREDENTIAL_KEY!);
  credentialKeys.set('env', kek);
  return {
    jwtSigningKey: decodeKey('GANTRY_SECRET_JWT_KEY', env.GANTRY_SECRET_JWT_KEY!),
    cursorSigningKey: decodeKey('GANTRY_SECRET_CURSOR_KEY', env.GANTRY_SECRET_CURSOR_KEY!),
    credentialKeys,
    activeCredentialKeyId: 'env',
    keyEncryptionKey: kek,
  };
}

/**
 * Loads secrets.json, generating it on first start. GANTRY_SECRET_JWT_KEY,
 * GANTRY_SECRET_CURSOR_KEY and GANTRY_SECRET_CREDENTIAL_KEY (base64, 32 bytes) override it.
 * With `shared` (PostgreSQL) the three are required instead (loadSharedSecrets).
 */
export function loadSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env, shared = false): Secrets {
  if (shared) return loadSharedSecrets(dataDir, env);
  let file = readSecretsFile(dataDir);
  if (!file) file = createSecretsFile(dataDir);
  const credentialKeys = new Map(file.credentialKeys.map((k) => [k.id, decodeKey(`credential key ${k.id}`, k.key)]));
  let activeCredentialKeyId = file.activeCredentialKeyId;
  if (env.GANTRY_SECRET_CREDENTIAL_KEY) {
    credentialKeys.set('env', decodeKey('GANTRY_SECRET_CREDENTIAL_KEY', env.GANTRY_SECRET_CREDENTIAL_KEY));
    activeCredentialKeyId = 'env';
  }
  if (!credentialKeys.has(activeCredentialKeyId))
    throw new ConfigError(`secrets.json names active credential key ${activeCredentialKeyId}, which it does not hold`);
  return {
    jwtSigningKey: decodeKey('GANTRY_SECRET_JWT_KEY', env.GANTRY_SECRET_JWT_KEY || file.jwtSigningKey),
    cursorSigningKey: decodeKey('GANTRY_SECRET_CURSOR_KEY', env.GANTRY_SECRET_CURSOR_KEY || file.cursorSigningKey),
    credentialKeys,
    activeCredentialKeyId,
    keyEncryptionKey: null,
  };
}
