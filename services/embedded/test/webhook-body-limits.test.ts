import type { AddressInfo } from 'node:net';
import { streamUntilAnswered } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProductApp, type ProductApp } from './product-app.js';

/**
 * The embedded runtime mounts the intake's routes in the gateway's app: a webhook body is held to
 * the intake route's byte limit there too, multipart included, while it streams.
 */

const BOUNDARY = '----embedded-test';
const MULTIPART = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
const MiB = 1024 * 1024;
const TOO_LARGE = { error: 'Request body is too large (limit: 1048576 bytes)' };

const field = (name: string, value: string) =>
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
const multipart = (parts: Buffer[]) => Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]);

let product: ProductApp;
let webhookPath: string;
let baseUrl: string;

beforeAll(async () => {
  product = await buildProductApp({ name: 'webhook-body-limits' });
  const created = await product.app.inject({
    method: 'POST',
    url: '/api/sources',
    headers: { authorization: product.authorization },
    payload: { name: 'Jotform' },
  });
  webhookPath = `/api/webhooks/${created.json<{ webhookToken: string }>().webhookToken}`;
  await product.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(product.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await product?.close();
});

describe('webhook bodies in the embedded runtime', () => {
  it('a multipart form post within the limits is a lead', async () => {
    const response = await product.app.inject({
      method: 'POST',
      url: webhookPath,
      headers: MULTIPART,
      payload: multipart([field('email', 'embedded@example.com'), field('firstName', 'Ada')]),
    });
    expect([response.statusCode, response.json()]).toEqual([200, { success: true }]);
  });

  it('a multipart body of 40 fields of 1 MiB: 413, not 200', async () => {
    const big = 'x'.repeat(MiB);
    const response = await product.app.inject({
      method: 'POST',
      url: webhookPath,
      headers: MULTIPART,
      payload: multipart(Array.from({ length: 40 }, (_, index) => field(`field${index}`, big))),
    });
    expect([response.statusCode, response.json()]).toEqual([413, TOO_LARGE]);
  });

  it.each([
    ['multipart', MULTIPART, field('field', 'x'.repeat(64 * 1024))],
    ['JSON', { 'content-type': 'application/json' }, Buffer.from(`{"notes":"${'x'.repeat(64 * 1024)}`)],
  ])('a %s body that never ends is answered 413 once it passes the limit', async (_type, headers, chunk) => {
    const answer = await streamUntilAnswered(`${baseUrl}${webhookPath}`, {
      headers,
      chunk,
      maxBytes: 40 * MiB,
    });
    expect([answer.status, JSON.parse(answer.body)]).toEqual([413, TOO_LARGE]);
    expect(answer.sentBytes).toBeLessThan(40 * MiB);
  });
});
