import type { Command } from 'commander';
import { createServer as createNetServer } from 'node:net';
import { resolveConfig, type ConfigFlags } from '../config.js';
import type { CliIo } from './io.js';

/**
 * Port 0 means "any free port": pick it now so the issuer URL names the real port, and hold it
 * until the server is about to listen. Released at once, the port could be taken meanwhile
 * (the app takes a while to build), by another listener or an outgoing connection.
 */
async function holdFreePort(host: string): Promise<{ port: number; release(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      resolve({ port, release: () => new Promise((done) => probe.close(() => done())) });
    });
  });
}

export function makeServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('run the appliance: HTTP API, pages, status service and jobs')
    .option('--data-dir <dir>', 'data directory (GANTRY_DATA_DIR)')
    .option('--database-url <url>', 'PostgreSQL instead of SQLite: postgres://... (GANTRY_DATABASE_URL)')
    .option('--host <host>', 'listen address (GANTRY_HOST)')
    .option('--port <port>', 'listen port, 0 = any free port (GANTRY_PORT)')
    .option('--public-url <url>', 'public base URL (GANTRY_PUBLIC_URL)')
    .option('--status-port <port>', 'second, status-only listener (GANTRY_STATUS_PORT)')
    .option('--web-url <url>', 'web application URL (GANTRY_WEB_URL)')
    .option('--smtp-url <url>', 'SMTP URL for outgoing mail (GANTRY_SMTP_URL)')
    .option('--log-level <level>', 'debug, info, warn, error (GANTRY_LOG_LEVEL)')
    .option('--rate-limit-multiplier <n>', 'multiply every rate limit (GANTRY_RATE_LIMIT_MULTIPLIER)')
    .option('--allow-private-networks', 'allow outbound calls to private addresses (GANTRY_ALLOW_PRIVATE_NETWORKS)')
    .option(
      '--trusted-proxies <list>',
      'reverse proxies whose X-Forwarded-For is believed: IPs/CIDRs, comma-separated (GANTRY_TRUSTED_PROXIES)',
    )
    .option('--json', 'accepted for symmetry; serve prints JSON log lines')
    .action(async (flags: ConfigFlags) => {
      let config = resolveConfig(flags, io.env);
      const held: Array<() => Promise<void>> = [];
      if (config.port === 0) {
        const free = await holdFreePort(config.host);
        held.push(free.release);
        config = resolveConfig({ ...flags, port: free.port }, io.env);
      }
      if (config.statusPort === 0) {
        const free = await holdFreePort(config.host);
        held.push(free.release);
        config = resolveConfig({ ...flags, port: config.port, statusPort: free.port }, io.env);
      }
      // Listen for SIGTERM before saying we listen: a supervisor (or a test) may stop us the
      // moment it reads that line, and without a handler Node would die without a clean stop.
      const stopSignal = io.stopSignal;
      let app;
      try {
        app = await io.app.open(config, { env: io.env });
      } catch (err) {
        await Promise.all(held.map((release) => release()));
        throw err;
      }
      const running = await io.app.start(app, { beforeListen: () => Promise.all(held.map((release) => release())) });
      const [main, status] = running.servers;
      const metrics =
        running.metrics && ` (metrics on ${running.metrics.address.address}:${running.metrics.address.port})`;
      io.out(`gantry listening on ${main.info.uri}${status ? ` (status on ${status.info.uri})` : ''}${metrics || ''}`);
      const signal = await stopSignal;
      app.kernel.logger.info('shutting down', { signal });
      await running.stop();
    });
}
