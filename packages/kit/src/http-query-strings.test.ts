import { describe, expect, it } from 'vitest';
import { json, useTestApp } from './http.test-helpers.js';

const { call } = useTestApp();

describe('query strings', () => {
  it('coerces scalars and applies defaults', async () => {
    expect(await call({ url: '/api/leads?page=2' })).toMatchObject({
      status: 200,
      body: { query: { page: 2, limit: 20 } },
    });
  });

  it.each([
    ['/api/leads?limit=101', 'limit must be <= 100'],
    ['/api/leads?limit=0', 'limit must be >= 1'],
    ['/api/leads?limit=ten', 'limit must be an integer'],
    ['/api/leads?status=won', 'status must be one of: new, contacted, qualified, converted, closed'],
    ['/api/leads?sourceId=website', 'sourceId must be a valid UUID'],
    ['/api/leads?startDate=yesterday', 'startDate must be an ISO 8601 date (YYYY-MM-DD)'],
    ['/api/leads?status=new&status=closed', 'status must be given once'],
    ['/api/leads?limit=1&limit=2', 'limit must be given once'],
  ])('%s -> 400 %s', async (url, error) => {
    expect(await call({ url })).toMatchObject({ status: 400, body: { error } });
  });

  it.each([
    '/api/leads?status[$ne]=closed',
    '/api/leads?status%5B%24ne%5D=closed',
    '/api/leads?a[b]=1',
    '/api/leads?a]=1',
    '/api/leads?$where=1',
    '/api/leads?%24where=1',
    '/api/leads?__proto__=x',
    '/echo?status[$ne]=closed',
    '/nowhere?status[$ne]=closed',
  ])('refuses operator smuggling: %s', async (url) => {
    const { status, body } = await call({ url });
    expect(status).toBe(400);
    expect(body).toEqual({ error: expect.stringMatching(/^Query parameter not allowed: /) });
  });

  it.each(['/api/leads?search=%ff%fe', '/api/leads?search=%E0%A4%A', '/api/leads?%ff=1', '/nowhere?q=%c3'])(
    'answers malformed percent-encoding with 400: %s',
    async (url) => {
      expect(await call({ url })).toMatchObject({
        status: 400,
        body: { error: 'Malformed percent-encoding in the query string' },
      });
    },
  );

  it('takes well-formed percent-encoding and + as a space', async () => {
    expect(await call({ url: '/api/leads?search=Jos%C3%A9+M%C3%BCller%20%25' })).toMatchObject({
      status: 200,
      body: { query: { search: 'José Müller %' } },
    });
  });

  it('names the refused parameter', async () => {
    expect((await call({ url: '/api/leads?status[$ne]=closed' })).body).toEqual({
      error: 'Query parameter not allowed: status[$ne]',
    });
  });
});

describe('numbers', () => {
  it('parses numbers and booleans of query strings and params from text', async () => {
    expect(await call({ method: 'POST', url: '/numbers/7?ratio=0.5&flag=true', payload: {} })).toMatchObject({
      status: 200,
      body: { params: { n: 7 }, query: { ratio: 0.5, flag: true }, body: {} },
    });
  });

  it.each([
    ['/numbers/1e400', 'n must be a finite number'],
    ['/numbers/Infinity', 'n must be a finite number'],
    ['/numbers/-1e400', 'n must be a finite number'],
    ['/numbers/NaN', 'n must be an integer'],
    ['/numbers/1?ratio=1e400', 'ratio must be a finite number'],
    ['/numbers/1?ratio=-1e400', 'ratio must be a finite number'],
    ['/numbers/1?ratio=-Infinity', 'ratio must be a finite number'],
    ['/numbers/1?ratio=NaN', 'ratio must be a number'],
    ['/api/leads?page=1e400', 'page must be a finite number'],
    ['/api/leads?limit=1e400', 'limit must be a finite number'],
  ])('%s -> 400 %s', async (url, error) => {
    const method = url.startsWith('/numbers') ? 'POST' : 'GET';
    expect(await call({ method, url, ...(method === 'POST' ? { payload: {} } : {}) })).toMatchObject({
      status: 400,
      body: { error },
    });
  });

  it('takes JSON numbers and booleans as they are', async () => {
    const payload = { weight: -100, ratio: 2.5, active: false, label: 'x' };
    expect(await call({ method: 'POST', url: '/numbers/1', payload })).toMatchObject({
      status: 200,
      body: { body: payload },
    });
  });

  it.each([
    ['{"weight":"10"}', 'weight must be an integer'],
    ['{"weight":"1e400"}', 'weight must be an integer'],
    ['{"weight":1e400}', 'weight must be an integer'],
    ['{"weight":-1e400}', 'weight must be an integer'],
    ['{"ratio":1e400}', 'ratio must be a number'],
    ['{"ratio":"0.5"}', 'ratio must be a number'],
    ['{"active":"true"}', 'active must be a boolean'],
    ['{"active":1}', 'active must be a boolean'],
    ['{"label":5}', 'label must be a string'],
    ['{"weight":null}', 'weight must be an integer'],
  ])('never coerces a JSON body: %s -> 400 %s', async (payload, error) => {
    expect(await call({ method: 'POST', url: '/numbers/1', headers: json, payload })).toMatchObject({
      status: 400,
      body: { error },
    });
  });
});
