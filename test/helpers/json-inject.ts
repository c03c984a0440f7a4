import type { TestApp } from './app.js';

export type JsonResponse = Awaited<ReturnType<TestApp['inject']>> & { json(): any; body: string };

/** Gives a test app's inject() answers a json() reader and the raw body text. */
export function withJson(
  app: TestApp,
): Omit<TestApp, 'inject'> & { inject(options: Parameters<TestApp['inject']>[0]): Promise<JsonResponse> } {
  const inject = app.inject;
  return Object.assign(app, {
    async inject(options: Parameters<TestApp['inject']>[0]) {
      const res = await inject(options);
      return Object.assign(res, { body: res.payload, json: () => JSON.parse(res.payload) });
    },
  }) as never;
}
