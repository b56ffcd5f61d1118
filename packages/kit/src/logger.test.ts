import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { registerHealthRoutes } from './health.js';
import { createHttpApp } from './http.js';
import { createLogger, redactUrl } from './logger.js';

/** A logger whose lines land in an array. */
function capture(options: { pretty?: boolean } = {}) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: 'debug', name: 'test', destination, ...options });
  return { logger, lines, text: () => lines.join('\n') };
}

describe('redactUrl', () => {
  it.each([
    ['/api/webhooks/tok_abc123', '/api/webhooks/[REDACTED]'],
    ['/api/webhooks/inbound/tok_abc123', '/api/webhooks/inbound/[REDACTED]'],
    ['/api/webhooks/tok_abc123?x=1', '/api/webhooks/[REDACTED]?x=1'],
    // The webhook route takes every path under /api/webhooks/: a token may be in any segment.
    ['/API/Webhooks/tok_abc123/extra', '/API/Webhooks/[REDACTED]/[REDACTED]'],
    ['/api/webhooks//tok_abc123', '/api/webhooks//[REDACTED]'],
    ['/api/webhooks/inbound//tok_abc123', '/api/webhooks/inbound//[REDACTED]'],
    ['/api/webhooks/inbound/tok_abc123/', '/api/webhooks/inbound/[REDACTED]/'],
    ['/api/webhooks/%2e%2e/tok_abc123?x=1', '/api/webhooks/[REDACTED]/[REDACTED]?x=1'],
    ['/api/webhooks/inbound', '/api/webhooks/inbound'],
    ['/api/leads?token=tok_abc123&page=2', '/api/leads?token=[REDACTED]&page=2'],
    ['/api/leads?page=2&Token=tok_abc123', '/api/leads?page=2&Token=[REDACTED]'],
    ['/stream?access_token=tok_abc123', '/stream?access_token=[REDACTED]'],
    ['/api/stream?lastEventId=7&ticket=tk_abc123', '/api/stream?lastEventId=7&ticket=[REDACTED]'],
    ['/api/leads?search=token', '/api/leads?search=token'],
    ['/api/leads/42', '/api/leads/42'],
  ])('%s -> %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});

describe('createLogger', () => {
  it('writes readable lines when asked (a terminal), still without secrets', () => {
    const { logger, lines } = capture({ pretty: true });
    logger.info({ port: 3000, password: 'sekret-1', headers: { authorization: 'Bearer sekret-2' } }, 'Ready');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: Ready /);
    expect(lines[0]).toContain('"port":3000');
    expect(lines[0]).not.toMatch(/sekret/);
    // Not a terminal: no colour codes.
    expect(lines[0]).not.toContain(String.fromCharCode(27));
  });

  it('writes JSON lines to a stream that is not a terminal', () => {
    const { logger, lines } = capture();
    logger.info({ port: 3000 }, 'Ready');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: 'Ready', port: 3000, name: 'test' });
  });

  it('redacts credential headers', () => {
    const { logger, text } = capture();
    logger.info(
      {
        req: { headers: { authorization: 'Bearer sekret-jwt', cookie: 'sid=sekret-cookie' } },
        headers: { 'x-api-key': 'sekret-key', 'x-internal-identity': 'sekret-identity', accept: 'json' },
      },
      'call',
    );
    expect(text()).not.toMatch(/sekret/);
    expect(text()).toContain('"accept":"json"');
  });

  it('redacts password, token and key fields at the usual depths', () => {
    const { logger, text } = capture();
    logger.info({
      password: 'sekret-1',
      body: { password: 'sekret-2', refreshToken: 'sekret-3' },
      user: { credentials: { apiKey: 'sekret-4', key: 'sekret-5' } },
      source: { detail: { deep: { webhookToken: 'sekret-6', token: 'sekret-7' } } },
      sources: [{ webhookToken: 'sekret-8' }],
      email: 'ada@example.com',
    });
    expect(text()).not.toMatch(/sekret/);
    expect(text()).toContain('ada@example.com');
    expect(text()).toContain('[REDACTED]');
  });

  it('redacts the webhook token from serialized requests', () => {
    const { logger, text } = capture();
    logger.info({ req: { method: 'POST', url: '/api/webhooks/inbound/sekret-token?token=sekret-q' } }, 'in');
    expect(text()).not.toMatch(/sekret/);
    expect(JSON.parse(text()).req.url).toBe('/api/webhooks/inbound/[REDACTED]?token=[REDACTED]');
  });

  it('keeps secrets out of the request logs fastify writes', async () => {
    const { logger, text } = capture();
    const app = createHttpApp({ logger });
    app.post('/api/webhooks/:token', async () => ({ success: true }));
    const response = await app.inject({
      method: 'POST',
      url: '/api/webhooks/sekret-token?token=sekret-query',
      headers: { authorization: 'Bearer sekret-jwt', 'x-api-key': 'sekret-key' },
      payload: { email: 'ada@example.com', password: 'sekret-password' },
    });
    const missing = await app.inject({ method: 'GET', url: '/api/webhooks/sekret-other' });
    // A sender whose base URL ends in a slash posts to /api/webhooks//<token>.
    const doubled = await app.inject({ method: 'POST', url: '/api/webhooks//sekret-token', payload: {} });
    await app.close();
    expect(response.statusCode).toBe(200);
    expect(missing.statusCode).toBe(404);
    expect(doubled.statusCode).toBe(404);
    expect(text()).toContain('/api/webhooks/[REDACTED]?token=[REDACTED]');
    expect(text()).toContain('request completed');
    expect(text()).not.toMatch(/sekret/);
  });

  it('does not log every health probe', async () => {
    const { logger, lines } = capture();
    const app = createHttpApp({ logger });
    registerHealthRoutes(app, { checks: {} });
    app.get('/api/leads', async () => []);
    await app.inject({ url: '/healthz' });
    await app.inject({ url: '/readyz' });
    expect(lines).toEqual([]);
    await app.inject({ url: '/api/leads' });
    await app.close();
    expect(lines.length).toBeGreaterThan(0);
  });
});
