import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type TestGateway } from './helpers.js';

/** Issue 26, row 9: an asset path leading out of the build tells nothing about what exists there. */
describe('dashboard assets', () => {
  let root: string;
  let gateway: TestGateway;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'gateway-dashboard-'));
    const dir = join(root, 'dist');
    await mkdir(join(dir, 'assets', 'nested'), { recursive: true });
    await writeFile(join(dir, 'index.html'), '<!doctype html><title>app</title>');
    await writeFile(join(dir, 'assets', 'app-1234.js'), 'console.log(1);');
    await writeFile(join(dir, 'assets', '.hidden'), 'secret');
    await writeFile(join(dir, 'secret.txt'), 'outside the assets');
    await writeFile(join(root, 'outside.txt'), 'outside the build');
    gateway = await createTestGateway({ dashboardDir: dir });
  });
  afterAll(async () => {
    await gateway.close();
    await rm(root, { recursive: true, force: true });
  });

  const get = (url: string) => gateway.app.inject({ method: 'GET', url });

  it('serves a hashed asset for a year', async () => {
    const response = await get('/assets/app-1234.js');
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('console.log(1);');
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('answers an existing file outside the assets exactly as a missing one', async () => {
    const answerTo = async (url: string) => {
      const { statusCode, headers, body } = await get(url);
      const { date: _date, 'content-length': _length, 'x-request-id': _id, ...stable } = headers;
      return { statusCode, headers: stable, body: body.replace(url, '<url>') };
    };
    const missing = await answerTo('/assets/no-such-file.js');
    expect(missing.statusCode).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({ error: 'Not found: GET <url>' });
    for (const [existing, absent] of [
      ['/assets/..%2F..%2Foutside.txt', '/assets/..%2F..%2Fmissing.txt'],
      ['/assets/..%2Fsecret.txt', '/assets/..%2Fmissing.txt'],
      ['/assets/..%2Findex.html', '/assets/..%2Fmissing.html'],
      ['/assets/.hidden', '/assets/.missing'],
      ['/assets/nested', '/assets/missing-folder'],
      ['/assets/nested/..%2F..%2F..%2Foutside.txt', '/assets/nested/..%2F..%2F..%2Fmissing.txt'],
    ] as const) {
      expect(await answerTo(existing), existing).toEqual(missing);
      expect(await answerTo(absent), absent).toEqual(missing);
    }
  });
});
