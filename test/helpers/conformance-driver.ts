// The "client under test" of the MCP conformance suite's client mode (docs/mcp-conformance.md,
// Client mode): the suite runs this (bundled once by the test) with a scenario server's URL as
// the last argument, and this drives a running Gantry through its REST API as a member would: an
// mcp-generic instance on that URL, a sync, the OAuth link when the server asks for one (the
// authorization URL followed as a browser would, to Gantry's callback), then every tool called. A refused call that leaves the
// instance waiting for a link (pending_auth: a step-up) is linked again and retried, a few times.
//
// Environment: GANTRY_DRIVER_URL (Gantry's base URL), GANTRY_DRIVER_AUTH (the Authorization
// header of a member), GANTRY_DRIVER_WORKSPACE (the workspace id), GANTRY_DRIVER_MCP_TOKEN (an
// MCP access token of that member for that workspace), and the suite's own
// MCP_CONFORMANCE_SCENARIO and MCP_CONFORMANCE_CONTEXT (pre-registered client credentials).
// Exits 0 when every tool was called, 1 (with the reason on stderr) otherwise.

/** Links in one run: the first one, and the step-ups after it (the suite allows at most 3). */
const MAX_LINKS = 3;

interface Envelope {
  data?: unknown;
  error?: { code: string; message: string } | null;
}

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

async function main(serverUrl: string): Promise<void> {
  const base = `${env('GANTRY_DRIVER_URL')}/api/v1`;
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'unknown';
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
    client_id?: string;
    client_secret?: string;
  };
  // The browser's cookie for Gantry: the link cookie an initiate sets, sent back to Gantry's
  // callback, so the browser that started a link finishes it (docs/connectors.md, OAuth linking).
  let linkCookie: string | null = null;
  const api = async (method: string, route: string, body?: object) => {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: {
        authorization: env('GANTRY_DRIVER_AUTH'),
        'x-workspace-id': env('GANTRY_DRIVER_WORKSPACE'),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const set = res.headers.getSetCookie().find((c) => c.startsWith('gantry_connector_link='));
    if (set) linkCookie = set.split(';')[0];
    const text = await res.text();
    try {
      return { status: res.status, ...(JSON.parse(text) as Envelope) };
    } catch {
      throw new Error(`${method} ${route}: ${res.status} answered no JSON: ${text.slice(0, 200)}`);
    }
  };
  const must = async (method: string, route: string, body?: object) => {
    const res = await api(method, route, body);
    if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${res.error?.message}`);
    return res.data;
  };

  const instance = (await must('POST', '/connectors/instances', {
    connectorKey: 'mcp-generic',
    displayName: scenario,
    toolPrefix: '',
    config: { url: serverUrl },
  })) as { id: string };
  const at = `/connectors/instances/${instance.id}`;
  const status = async () => (await must('GET', at)) as { status: string; healthMessage: string | null };

  let links = 0;
  /** Initiates a link and follows the authorization URL as a browser, up to Gantry's outcome page. */
  const link = async () => {
    if (++links > MAX_LINKS)
      throw new Error(`still refused after ${MAX_LINKS} links: ${(await status()).healthMessage}`);
    const given = context.client_id ? { clientId: context.client_id, clientSecret: context.client_secret } : {};
    const { redirectUrl } = (await must('POST', `${at}/oauth/initiate`, given)) as { redirectUrl: string };
    let url = new URL(redirectUrl);
    for (let hop = 0; hop < 10 && !url.pathname.endsWith('/settings/connectors'); hop++) {
      const toGantry = url.origin === new URL(base).origin && linkCookie !== null;
      const res = await fetch(url, { redirect: 'manual', headers: toGantry ? { cookie: linkCookie! } : {} });
      const location = res.headers.get('location');
      if (!location) throw new Error(`${url.href} answered ${res.status} without a redirect`);
      url = new URL(location, url);
    }
    if (url.searchParams.get('status') !== 'success') throw new Error(`the link failed: ${url.href}`);
  };
  /** Runs `step`; when it is refused and the instance waits for a link, links and runs it again. */
  const withLinks = async <T>(
    what: string,
    step: () => Promise<{ status: number; data?: unknown; error?: Envelope['error'] }>,
  ) => {
    for (;;) {
      const res = await step();
      if (res.status < 300) return res.data as T;
      const now = await status();
      if (now.status !== 'pending_auth') throw new Error(`${what}: ${res.status} ${res.error?.message}`);
      await link();
    }
  };

  const tools = await withLinks<Array<{ id: string; toolKey: string; inputSchema: Schema }>>('sync', () =>
    api('POST', `${at}/sync-tools`),
  );
  // Over MCP, Gantry serves only the tools of active instances; an instance that needed no link
  // is made active by a test, as a member does (docs/connectors.md, Status moves).
  if (scenario.startsWith('elicitation') && (await status()).status !== 'active') await must('POST', `${at}/test`);
  for (const tool of tools) {
    if (scenario.startsWith('elicitation')) {
      await callOverMcp(base, tool.toolKey, sample(tool.inputSchema));
      continue;
    }
    const result = await withLinks<{ status: string }>(`call ${tool.toolKey}`, () =>
      api('POST', `${at}/tools/${tool.id}/invoke`, { input: sample(tool.inputSchema) }),
    );
    if (result.status !== 'completed') throw new Error(`call ${tool.toolKey}: ${result.status}`);
  }
}

/**
 * A tool that asks its caller a question (elicitation) needs a caller who can answer: REST has
 * none, so it is called over Gantry's MCP endpoint (GANTRY_DRIVER_MCP_TOKEN), Gantry relays the
 * question unchanged (docs/connectors.md, MCP pass-through), and this client accepts the form
 * as a user would who changes nothing: every field at its schema default.
 */
async function callOverMcp(base: string, toolKey: string, args: Record<string, unknown>) {
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const client = new Client(
    { name: 'gantry-conformance-driver', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    const schema = (request.params as { requestedSchema?: { properties?: Record<string, { default?: unknown }> } })
      .requestedSchema;
    const content = Object.fromEntries(
      Object.entries(schema?.properties ?? {})
        .filter(([, field]) => field.default !== undefined)
        .map(([name, field]) => [name, field.default]),
    );
    return { action: 'accept', content } as never;
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${env('GANTRY_DRIVER_MCP_TOKEN')}` } },
  });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === toolKey || t.name.endsWith(`_${toolKey}`));
    if (!tool) throw new Error(`${toolKey} is not served over MCP: ${tools.map((t) => t.name).join(', ')}`);
    const result = (await client.callTool({ name: tool.name, arguments: args })) as { isError?: boolean };
    if (result.isError) throw new Error(`call ${toolKey} over MCP: ${JSON.stringify(result)}`);
  } finally {
    await client.close();
  }
}

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
}

/** Arguments that satisfy a tool's input schema: its required properties, each a value of its type. */
function sample(schema: Schema | undefined): Record<string, unknown> {
  const values: Record<string, unknown> = { number: 1, integer: 1, string: 'x', boolean: true, array: [], object: {} };
  return Object.fromEntries(
    (schema?.required ?? []).map((name) => [name, values[schema?.properties?.[name]?.type ?? 'string'] ?? 'x']),
  );
}

main(process.argv.at(-1) ?? '').then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`conformance driver: ${err.message}\n`);
    process.exit(1);
  },
);
