import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ADAPTERS } from '../../src/ai/providers/index.js';
import { isInternalAddress as isPrivateAddress } from '../../src/lib/outbound.js';
import { ProviderError, type ProviderConfig, type ProviderName } from '../../src/ai/providers/types.js';
import { Router } from '../../src/ai/router.js';
import { ManualClock } from '../../src/lib/clock.js';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-ai.js';

const outbound = { allowPrivateNetworks: true, timeoutMs: 1000 };
const messages = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: 'Hi' },
];
const models: Record<ProviderName, string> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-3-5-haiku-latest',
  google: 'gemini-2.0-flash',
};

describe('provider adapters speak each wire format', () => {
  const fakes = {} as Record<ProviderName, FakeProvider>;
  const config = (name: ProviderName, overrides: Partial<ProviderConfig> = {}): ProviderConfig => ({
    name,
    baseUrl: fakes[name].url,
    apiKey: fakes[name].apiKey,
    models: [models[name]],
    priority: 1,
    ...overrides,
  });
  const chat = (name: ProviderName, o: Partial<ProviderConfig> = {}, out = outbound) =>
    ADAPTERS[name].chat(
      config(name, o),
      { model: models[name], messages, maxOutputTokens: 50 },
      out,
      new AbortController().signal,
    );
  const fails = async (p: Promise<unknown>, kind: string, retryable: boolean) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ProviderError, `expected a ProviderError, got ${String(err)}`);
    assert.equal(err.kind, kind);
    assert.equal(err.retryable, retryable);
  };

  before(async () => {
    for (const name of ['openai', 'anthropic', 'google'] as const) fakes[name] = await startFakeProvider(name);
  });
  after(async () => {
    for (const f of Object.values(fakes)) await f.close();
  });

  it('OpenAI: /v1/chat/completions with a bearer key; usage.prompt_tokens/completion_tokens', async () => {
    const result = await chat('openai', { baseUrl: `${fakes.openai.url}/v1` });
    assert.deepEqual(result, { content: 'hello from openai', model: 'gpt-4o-mini', inputTokens: 12, outputTokens: 7 });
    const req = fakes.openai.chats().at(-1)!;
    assert.equal(req.path, '/v1/chat/completions', 'a trailing /v1 on the base URL is not doubled');
    assert.deepEqual(req.body, { model: 'gpt-4o-mini', messages, max_tokens: 50, stream: false });
  });

  it('Anthropic: /v1/messages with x-api-key, anthropic-version, top-level system', async () => {
    const result = await chat('anthropic');
    assert.equal(result.content, 'hello from anthropic');
    assert.equal(result.inputTokens, 12);
    const req = fakes.anthropic.chats().at(-1)!;
    assert.equal(req.path, '/v1/messages');
    assert.equal(req.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(req.body, {
      model: 'claude-3-5-haiku-latest',
      max_tokens: 50,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
    });
  });

  it('Gemini: generateContent with x-goog-api-key, contents/parts, systemInstruction; usageMetadata', async () => {
    const result = await chat('google');
    assert.deepEqual(result, {
      content: 'hello from google',
      model: 'gemini-2.0-flash',
      inputTokens: 12,
      outputTokens: 7,
    });
    const req = fakes.google.chats().at(-1)!;
    assert.equal(req.path, '/v1beta/models/gemini-2.0-flash:generateContent');
    assert.deepEqual(req.body, {
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 50 },
    });
  });

  for (const name of ['openai', 'anthropic', 'google'] as const) {
    it(`${name}: classifies 429, 500, timeout, malformed, missing usage, oversize, 400, a wrong key and a dead port`, async () => {
      const fake = fakes[name];
      try {
        fake.mode = '429';
        await fails(chat(name), 'rate_limited', true);
        fake.mode = '500';
        await fails(chat(name), 'server', true);
        fake.mode = 'hang';
        await fails(chat(name), 'timeout', true);
        fake.mode = 'malformed';
        await fails(chat(name), 'malformed', false);
        fake.mode = 'no-usage';
        await fails(chat(name), 'malformed', false);
        fake.mode = 'huge';
        await fails(chat(name), 'malformed', false);
        fake.mode = 'bad-request';
        await fails(chat(name), 'refused', false);
        fake.mode = 'ok';
        await fails(chat(name, { apiKey: 'wrong-key' }), 'auth', false);
        await fails(chat(name, { baseUrl: 'http://127.0.0.1:1' }), 'network', true);
        await ADAPTERS[name].ping(config(name), outbound, new AbortController().signal);
      } finally {
        fake.mode = 'ok';
      }
    });
  }

  it('refuses loopback and private addresses unless allowed', async () => {
    await fails(chat('openai', {}, { ...outbound, allowPrivateNetworks: false }), 'blocked', false);
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '0.0.0.0',
    ])
      assert.equal(isPrivateAddress(a), true, a);
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) assert.equal(isPrivateAddress(a), false, a);
  });

  it('router: fails over in order, skips open circuits, stops on a refused request, probes', async () => {
    const clock = new ManualClock();
    const router = new Router({ threshold: 2, cooldownMs: 10_000 }, clock, outbound);
    const candidates = (['openai', 'anthropic', 'google'] as const).map((n) => ({
      config: config(n),
      model: models[n],
    }));
    fakes.openai.mode = '500';
    fakes.anthropic.mode = '429';
    try {
      const first = await router.route(candidates, messages, 20);
      assert.equal(first.ok, true);
      assert.deepEqual(
        first.attempts.map((a) => [a.provider, a.outcome]),
        [
          ['openai', 'server'],
          ['anthropic', 'rate_limited'],
          ['google', 'succeeded'],
        ],
      );
      await router.route(candidates, messages, 20);
      assert.equal(router.breaker('openai').state(), 'open');
      const before = fakes.openai.chats().length;
      const third = await router.route(candidates, messages, 20);
      assert.equal(third.attempts[0].outcome, 'skipped');
      assert.equal(fakes.openai.chats().length, before, 'an open circuit is not called');

      fakes.google.mode = 'bad-request';
      const refused = await router.route(candidates.slice(2), messages, 20);
      assert.equal(refused.ok, false);
      assert.equal(refused.ok === false && refused.refusal?.kind, 'refused');
      assert.equal(router.breaker('google').state(), 'closed', 'a refused request does not count against the provider');

      fakes.openai.mode = 'ok';
      clock.advance(10_000);
      assert.equal(router.breaker('openai').state(), 'half-open');
      assert.equal(await router.probe(config('openai')), true);
      assert.equal(router.breaker('openai').state(), 'closed');
    } finally {
      for (const f of Object.values(fakes)) f.mode = 'ok';
    }
  });
});
