import { SYNC_CALLS } from '@lead-capture/contracts';
import { createHttpApp, createLogger, INTERNAL_PATH_PREFIX } from '@lead-capture/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProductApp, type ProductApp } from './product-app.js';

/**
 * The declared synchronous calls are what a callee trusts another service's key for: each must be
 * a route its callee serves, and a service serving an internal route nobody is declared to call
 * would refuse every caller.
 */
describe('SYNC_CALLS', () => {
  let product: ProductApp;
  /** Every `/internal/` route of every module, as `<service> <METHOD> <url>`. */
  const internalRoutes: string[] = [];

  beforeAll(async () => {
    product = await buildProductApp({ name: 'sync-calls', start: false });
    for (const module of product.modules) {
      const app = createHttpApp({ logger: createLogger({ level: 'silent', name: 'sync-calls' }) });
      app.decorateRequest('identity', undefined);
      app.addHook('onRoute', ({ method, url }) => {
        if (!url.startsWith(INTERNAL_PATH_PREFIX)) return;
        for (const one of [method].flat())
          if (one !== 'HEAD') internalRoutes.push(`${module.name} ${one} ${url}`);
      });
      await module.registerRoutes?.(app);
      await app.close();
    }
  });
  afterAll(() => product?.close());

  it('declares exactly the internal routes the services serve, each under its callee', () => {
    const declared = SYNC_CALLS.flatMap(({ callee, methods, path }) =>
      methods.map((method) => `${callee} ${method} ${path}`),
    );
    expect(internalRoutes.length).toBeGreaterThan(0);
    expect([...new Set(internalRoutes)].sort()).toEqual([...new Set(declared)].sort());
    for (const { callee, path } of SYNC_CALLS)
      expect(path.startsWith(`/internal/${callee}/`), path).toBe(true);
  });
});
