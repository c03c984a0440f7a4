import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  ConfigError,
  parseBool,
  parseDatabaseUrl,
  parseHostList,
  parsePort,
  parsePositive,
  parseTrustedProxies,
  parseUrl,
  type TrustedProxy,
} from './config-values.js';
import { billingConfig, type BillingConfig } from './config-billing.js';
import { parseBrand, type Brand } from './config-brand.js';
import { tracingConfig, type TracingConfig } from './lib/tracing-config.js';

export { ConfigError, type TrustedProxy } from './config-values.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Config {
  readonly dataDir: string;
  readonly dbFile: string;
  /**
   * PostgreSQL instead of the SQLite file (docs/postgres.md): a postgres:// URL from
   * GANTRY_DATABASE_URL or --database-url; null keeps SQLite in the data directory.
   */
  readonly databaseUrl: string | null;
  readonly host: string;
  readonly port: number;
  readonly publicUrl: string;
  readonly statusPort: number | null;
  /** The Prometheus listener (GANTRY_METRICS_PORT, GANTRY_METRICS_HOST); null: none. */
  readonly metrics: { port: number; host: string } | null;
  readonly webUrl: string;
  readonly smtpUrl: string | null;
  readonly logLevel: LogLevel;
  readonly rateLimitMultiplier: number;
  readonly allowPrivateNetworks: boolean;
  /** Whether clients may register themselves at the RFC 7591 endpoint (docs/oauth.md, Self-registered clients). */
  readonly oauthDynamicRegistration: boolean;
  /**
   * Client ID Metadata Documents (docs/oauth.md): whether a client may name itself by a document's
   * URL at all (GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS), and from which hosts
   * (GANTRY_OAUTH_CLIENT_METADATA_HOSTS; empty: any host the outbound guard lets Gantry reach).
   */
  readonly oauthMetadataDocuments: { readonly enabled: boolean; readonly trustedHosts: readonly string[] };
  /**
   * Reverse proxies whose X-Forwarded-For is believed (docs/kernel.md, Client address); empty:
   * the peer address is the client address.
   */
  readonly trustedProxies: readonly TrustedProxy[];
  /** Days a soft-deleted account can be restored before the purge job removes it. */
  readonly accountRetentionDays: number;
  /** Wallet top-ups and seat releases (docs/billing.md). */
  readonly billing: BillingConfig;
  /** Days archived or expired notifications are kept before the purge job removes them. */
  readonly notificationRetentionDays: number;
  /** Milliseconds between heartbeat comments on notification streams (and credential checks). */
  readonly notificationHeartbeatMs: number;
  /** Cron pattern of the connector OAuth refresh job (docs/interface.md, Operations: every 5 minutes). */
  readonly connectorRefreshCron: string;
  /** scrypt cost parameter N; tests lower it, production keeps the default. */
  readonly scryptCost: number;
  /** The operator's name and logo on every page (docs/operations.md, Branding). */
  readonly brand: Brand;
  /**
   * Endpoints and client of the built-in OAuth connectors (github, google, slack), from
   * GANTRY_CONNECTOR_<KEY>_{CLIENT_ID,CLIENT_SECRET,AUTHORIZE_URL,TOKEN_URL,CHECK_URL}.
   */
  readonly connectorProviders: Readonly<Record<string, ConnectorProviderConfig>>;
  /** 2025-era MCP sessions this process keeps open (GANTRY_MCP_MAX_SESSIONS; docs/mcp.md, Protocol eras). */
  readonly mcpMaxSessions: number;
  /** Where spans are exported (the standard OTEL_* variables; docs/operations.md, Traces); null: no tracing. */
  readonly tracing: TracingConfig | null;
  /** AI providers: per-call timeout, output cap, breaker threshold and cool-down, probe cron. */
  readonly ai: {
    timeoutMs: number;
    maxOutputTokens: number;
    breakerThreshold: number;
    breakerCooldownMs: number;
    healthCron: string;
  };
}

interface ConnectorProviderConfig {
  clientId?: string;
  clientSecret?: string;
  authorizeUrl?: string;
  tokenUrl?: string;
  checkUrl?: string;
}

function connectorProviders(env: NodeJS.ProcessEnv): Record<string, ConnectorProviderConfig> {
  const out: Record<string, ConnectorProviderConfig> = {};
  const fields: Record<string, keyof ConnectorProviderConfig> = {
    CLIENT_ID: 'clientId',
    CLIENT_SECRET: 'clientSecret',
    AUTHORIZE_URL: 'authorizeUrl',
    TOKEN_URL: 'tokenUrl',
    CHECK_URL: 'checkUrl',
  };
  for (const [name, value] of Object.entries(env)) {
    const match = /^GANTRY_CONNECTOR_([A-Z0-9_]+?)_(CLIENT_ID|CLIENT_SECRET|AUTHORIZE_URL|TOKEN_URL|CHECK_URL)$/.exec(
      name,
    );
    if (!match || !value) continue;
    const key = match[1].toLowerCase().replace(/_/g, '-');
    const field = fields[match[2]];
    (out[key] ??= {})[field] = field.endsWith('Url') ? parseUrl(name, value) : value;
  }
  return out;
}

/** Flags as commander hands them over (camelCase names of the flags listed in README.md). */
export interface ConfigFlags {
  dataDir?: string;
  databaseUrl?: string;
  host?: string;
  port?: string | number;
  publicUrl?: string;
  statusPort?: string | number;
  webUrl?: string;
  smtpUrl?: string;
  logLevel?: string;
  rateLimitMultiplier?: string | number;
  allowPrivateNetworks?: boolean;
  trustedProxies?: string;
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

function pick<T>(flag: T | undefined, env: string | undefined): T | string | undefined {
  return flag !== undefined ? flag : env !== undefined && env !== '' ? env : undefined;
}

/** Flags override environment; environment overrides defaults (docs/interface.md, Operations). */
export function resolveConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = path.resolve(String(pick(flags.dataDir, env.GANTRY_DATA_DIR) ?? './data'));
  const host = String(pick(flags.host, env.GANTRY_HOST) ?? '127.0.0.1');
  const port = parsePort('GANTRY_PORT', pick(flags.port, env.GANTRY_PORT) ?? 8080);
  const statusRaw = pick(flags.statusPort, env.GANTRY_STATUS_PORT);
  const statusPort = statusRaw === undefined ? null : parsePort('GANTRY_STATUS_PORT', statusRaw);
  const metricsRaw = env.GANTRY_METRICS_PORT || undefined;
  const publicRaw = pick(flags.publicUrl, env.GANTRY_PUBLIC_URL);
  const publicUrl =
    publicRaw === undefined
      ? `http://${host.includes(':') ? `[${host}]` : host}:${port}`
      : parseUrl('GANTRY_PUBLIC_URL', String(publicRaw));
  const webRaw = pick(flags.webUrl, env.GANTRY_WEB_URL);
  const webUrl = webRaw === undefined ? publicUrl : parseUrl('GANTRY_WEB_URL', String(webRaw));
  const smtpRaw = pick(flags.smtpUrl, env.GANTRY_SMTP_URL);
  const logLevel = String(pick(flags.logLevel, env.GANTRY_LOG_LEVEL) ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError(`GANTRY_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  const multiplier = parsePositive(
    'GANTRY_RATE_LIMIT_MULTIPLIER',
    pick(flags.rateLimitMultiplier, env.GANTRY_RATE_LIMIT_MULTIPLIER) ?? 1,
  );
  const trustedProxies = parseTrustedProxies(
    'GANTRY_TRUSTED_PROXIES',
    String(pick(flags.trustedProxies, env.GANTRY_TRUSTED_PROXIES) ?? ''),
  );
  const allowPrivate = parseBool(
    'GANTRY_ALLOW_PRIVATE_NETWORKS',
    pick(flags.allowPrivateNetworks, env.GANTRY_ALLOW_PRIVATE_NETWORKS) ?? false,
  );

  return Object.freeze({
    dataDir,
    dbFile: path.join(dataDir, 'gantry.db'),
    databaseUrl: parseDatabaseUrl(pick(flags.databaseUrl, env.GANTRY_DATABASE_URL)),
    host,
    port,
    publicUrl,
    statusPort,
    metrics:
      metricsRaw === undefined
        ? null
        : Object.freeze({
            port: parsePort('GANTRY_METRICS_PORT', metricsRaw),
            host: env.GANTRY_METRICS_HOST || '127.0.0.1',
          }),
    webUrl,
    smtpUrl: smtpRaw === undefined ? null : String(smtpRaw),
    logLevel,
    rateLimitMultiplier: multiplier,
    allowPrivateNetworks: allowPrivate,
    oauthDynamicRegistration: parseBool(
      'GANTRY_OAUTH_DYNAMIC_REGISTRATION',
      env.GANTRY_OAUTH_DYNAMIC_REGISTRATION || true,
    ),
    oauthMetadataDocuments: Object.freeze({
      enabled: parseBool('GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS', env.GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS || true),
      trustedHosts: Object.freeze(
        parseHostList('GANTRY_OAUTH_CLIENT_METADATA_HOSTS', env.GANTRY_OAUTH_CLIENT_METADATA_HOSTS ?? ''),
      ),
    }),
    trustedProxies: Object.freeze(trustedProxies),
    accountRetentionDays: parsePositive('GANTRY_ACCOUNT_RETENTION_DAYS', env.GANTRY_ACCOUNT_RETENTION_DAYS || 30),
    billing: billingConfig(env),
    notificationRetentionDays: parsePositive(
      'GANTRY_NOTIFICATION_RETENTION_DAYS',
      env.GANTRY_NOTIFICATION_RETENTION_DAYS || 90,
    ),
    notificationHeartbeatMs: parsePositive(
      'GANTRY_NOTIFICATION_HEARTBEAT_MS',
      env.GANTRY_NOTIFICATION_HEARTBEAT_MS || 15_000,
    ),
    mcpMaxSessions: Math.ceil(parsePositive('GANTRY_MCP_MAX_SESSIONS', env.GANTRY_MCP_MAX_SESSIONS || 2_000)),
    connectorRefreshCron: env.GANTRY_CONNECTOR_REFRESH_CRON || '*/5 * * * *',
    scryptCost: parsePositive('GANTRY_SCRYPT_COST', env.GANTRY_SCRYPT_COST || 16384),
    brand: parseBrand(env, publicUrl),
    connectorProviders: Object.freeze(connectorProviders(env)),
    tracing: tracingConfig(env),
    ai: Object.freeze({
      timeoutMs: parsePositive('GANTRY_AI_TIMEOUT_MS', env.GANTRY_AI_TIMEOUT_MS || 60_000),
      maxOutputTokens: Math.floor(
        parsePositive('GANTRY_AI_MAX_OUTPUT_TOKENS', env.GANTRY_AI_MAX_OUTPUT_TOKENS || 1024),
      ),
      breakerThreshold: Math.floor(parsePositive('GANTRY_AI_BREAKER_THRESHOLD', env.GANTRY_AI_BREAKER_THRESHOLD || 3)),
      breakerCooldownMs: parsePositive('GANTRY_AI_BREAKER_COOLDOWN_MS', env.GANTRY_AI_BREAKER_COOLDOWN_MS || 30_000),
      healthCron: env.GANTRY_AI_HEALTH_CRON || '*/30 * * * * *',
    }),
  });
}

/** A data directory that is not there, where it must be (docs/kernel.md, Configuration and secrets). */
export const missingDataDir = (dataDir: string) =>
  new ConfigError(
    `data directory ${dataDir} does not exist (gantry serve or gantry migrate creates one; check --data-dir and GANTRY_DATA_DIR)`,
  );

/**
 * Creates the data directory if needed (`create`: serve and migrate) and proves it is
 * writable; a clear line otherwise. Without `create` a missing one is refused on SQLite, where
 * it is the installation (a typo must not start a second, empty one); on PostgreSQL it is left
 * alone: the database is the installation and nothing is written to the directory (the CLI
 * still refuses a missing one the operator named, src/cli/context.ts).
 */
export function ensureDataDir(config: Config, create = true): void {
  if (!create && !existsSync(config.dataDir)) {
    if (config.databaseUrl !== null) return;
    throw missingDataDir(config.dataDir);
  }
  try {
    // Recursive mkdir spins forever under some pseudo-filesystems (/proc): create the parent
    // chain only when the parent is missing, and the directory itself non-recursively.
    if (!existsSync(config.dataDir)) {
      const parent = path.dirname(config.dataDir);
      if (!existsSync(parent)) mkdirSync(parent, { recursive: true, mode: 0o700 });
      mkdirSync(config.dataDir, { mode: 0o700 });
    }
    if (!statSync(config.dataDir).isDirectory()) throw new Error('not a directory');
    accessSync(config.dataDir, constants.W_OK | constants.R_OK);
  } catch (err) {
    throw new ConfigError(
      `data directory ${config.dataDir} is not writable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
}
