import { afterEach, describe, expect, it } from 'vitest';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearer,
  createTestGateway,
  login,
  type TestGateway,
} from './helpers.js';

/** Security review, finding 13: browser-facing headers on every answer. */
const gateways: TestGateway[] = [];
afterEach(async () => {
  while (gateways.length > 0) await gateways.pop()!.close();
});

async function gatewayWith(env: Record<string, string> = {}): Promise<TestGateway> {
  const gateway = await createTestGateway({ env });
  gateways.push(gateway);
  return gateway;
}

function directives(csp: unknown): Map<string, string[]> {
  expect(typeof csp).toBe('string');
  return new Map(
    (csp as string)
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

describe('security headers (security review, finding 13)', () => {
  it('sends a strict CSP, nosniff, no referrer and no framing on API answers, errors included', async () => {
    const gateway = await gatewayWith();
    const session = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const answers = [
      await gateway.app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(session.token) }),
      await gateway.app.inject({ method: 'GET', url: '/api/auth/me' }),
      await gateway.app.inject({ method: 'GET', url: '/api/nothing-here', headers: bearer(session.token) }),
      await gateway.app.inject({ method: 'GET', url: '/healthz' }),
    ];
    expect(answers.map((response) => response.statusCode)).toEqual([200, 401, 404, 200]);
    for (const response of answers) {
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers['x-frame-options']).toBe('DENY');
      // helmet's other defaults, as @fastify/helmet used to send them.
      expect(response.headers).toMatchObject({
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-resource-policy': 'same-origin',
        'origin-agent-cluster': '?1',
        'x-dns-prefetch-control': 'off',
        'x-download-options': 'noopen',
        'x-permitted-cross-domain-policies': 'none',
        'x-xss-protection': '0',
      });
      const csp = directives(response.headers['content-security-policy']);
      expect(csp.get('default-src')).toEqual(["'self'"]);
      // A same-origin bundled dashboard works; nothing inline, no eval, nobody frames us.
      expect(csp.get('script-src')).toEqual(["'self'"]);
      expect(csp.get('style-src')).toEqual(["'self'"]);
      expect(csp.get('connect-src')).toEqual(["'self'"]);
      expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
      expect(csp.get('object-src')).toEqual(["'none'"]);
      expect(response.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('serves /docs with its own policy: its own scripts only, framing refused', async () => {
    const gateway = await gatewayWith();
    const page = await gateway.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = directives(page.headers['content-security-policy']);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(csp.get('connect-src')).toEqual(["'self'"]);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    // Every script of the page is a same-origin file the policy allows, served as JavaScript.
    const scripts = [...page.body.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, inline] of scripts) {
      expect(inline!.trim()).toBe('');
      const src = /src="([^"]+)"/.exec(attributes!)?.[1];
      expect(src).toMatch(/^\.\/static\//);
      const script = await gateway.app.inject({ method: 'GET', url: `/docs/${src!.slice(2)}` });
      expect(script.statusCode).toBe(200);
      expect(script.headers['content-type']).toMatch(/javascript/);
    }
    const styles = [...page.body.matchAll(/<link rel="stylesheet"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
    for (const href of styles) expect(href).toMatch(/^\.\/static\//);
    const document = await gateway.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(document.statusCode).toBe(200);
    expect(document.headers['x-content-type-options']).toBe('nosniff');
  });

  it('sends HSTS only to HTTPS requests (X-Forwarded-Proto believed from a trusted proxy)', async () => {
    const trusting = await gatewayWith({ TRUST_PROXY: '127.0.0.1' });
    const overHttps = await trusting.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(overHttps.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    const overHttp = await trusting.app.inject({ method: 'GET', url: '/healthz' });
    expect(overHttp.headers['strict-transport-security']).toBeUndefined();

    const untrusting = await gatewayWith();
    const forged = await untrusting.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(forged.headers['strict-transport-security']).toBeUndefined();

    const always = await gatewayWith({ HSTS: 'always' });
    const plain = await always.app.inject({ method: 'GET', url: '/api/auth/me' });
    expect(plain.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    const off = await gatewayWith({ HSTS: 'off', TRUST_PROXY: '127.0.0.1' });
    const none = await off.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(none.headers['strict-transport-security']).toBeUndefined();
  });
});
