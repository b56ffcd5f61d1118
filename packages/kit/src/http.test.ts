import { once } from 'node:events';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { LEAD_STATUSES } from '@lead-capture/contracts';
import { waitFor } from '@lead-capture/testing';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conflict, internal, notFound, unavailable } from './errors.js';
import { createHttpApp } from './http.js';
import { createLogger } from './logger.js';

const logLines: string[] = [];
let app: FastifyInstance;

beforeAll(async () => {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  app = createHttpApp({
    logger: createLogger({ level: 'info', name: 'test', destination }),
    bodyLimit: 1024,
  });

  app.get(
    '/api/leads',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: {
            page: { type: 'integer', minimum: 1, default: 1 },
            limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
            status: { type: 'string', enum: LEAD_STATUSES },
            sourceId: { type: 'string', format: 'uuid' },
            startDate: { type: 'string', format: 'date' },
          },
        },
      },
    },
    async (request) => ({ query: request.query }),
  );
  app.get('/api/leads/:id', async (request) => ({ params: request.params }));
  app.post(
    '/api/sources',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 255 },
            email: { type: 'string', format: 'email' },
            fieldMappings: { type: 'object' },
            stages: { type: 'array', items: { type: 'object', required: ['name'] } },
          },
        },
      },
    },
    async (request, reply) => reply.code(201).send({ body: request.body }),
  );
  app.post(
    '/numbers/:n',
    {
      schema: {
        params: { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 100 } } },
        querystring: {
          type: 'object',
          properties: { ratio: { type: 'number', maximum: 1 }, flag: { type: 'boolean' } },
        },
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            weight: { type: 'integer', minimum: -100, maximum: 100 },
            ratio: { type: 'number' },
            active: { type: 'boolean' },
            label: { type: 'string' },
          },
        },
      },
    },
    async (request) => ({ params: request.params, query: request.query, body: request.body }),
  );
  app.post('/echo', async (request) => ({ body: request.body ?? null }));
  app.get('/echo', async (request) => ({ query: request.query }));
  app.get('/boom', async () => {
    throw new Error('connect ECONNREFUSED mongo password=hunter2');
  });
  app.get('/internal', async () => {
    throw internal('Ledger out of balance');
  });
  app.get('/missing', async () => {
    throw notFound('Lead not found');
  });
  app.get('/taken', async () => {
    throw conflict('A source with this name already exists');
  });
  app.get('/busy', async () => {
    throw unavailable('Lead store unavailable; retry shortly', 5);
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
});

async function call(options: InjectOptions) {
  const response = await app.inject(options);
  return { status: response.statusCode, body: response.json() as unknown, headers: response.headers };
}

const json = { 'content-type': 'application/json' };

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
    ['/api/leads?status=new&status=closed', 'status must be a string'],
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

describe('JSON bodies', () => {
  it('accepts a valid body', async () => {
    expect(await call({ method: 'POST', url: '/api/sources', payload: { name: 'Website' } })).toEqual(
      expect.objectContaining({ status: 201, body: { body: { name: 'Website' } } }),
    );
  });

  it.each([
    [{}, 'name is required'],
    [{ name: '' }, 'name must not be empty'],
    [{ name: {} }, 'name must be a string'],
    [{ name: 'x'.repeat(256) }, 'name must be at most 255 characters long'],
    [{ name: 'W', email: 'not-mail' }, 'email must be a valid email address'],
    [{ name: 'W', isAdmin: true }, 'isAdmin is not an allowed field'],
    [{ name: 'W', stages: [{}] }, 'stages[0].name is required'],
    [['W'], 'Request body must be an object'],
  ])('%j -> 400 %s', async (payload, error) => {
    expect(await call({ method: 'POST', url: '/api/sources', payload })).toMatchObject({
      status: 400,
      body: { error },
    });
  });

  it('answers malformed JSON with 400', async () => {
    const response = await call({
      method: 'POST',
      url: '/api/sources',
      headers: json,
      payload: '{"name": "W",',
    });
    expect(response).toMatchObject({ status: 400, body: { error: 'Malformed JSON body' } });
  });

  it('answers an empty JSON body with 400', async () => {
    const response = await call({ method: 'POST', url: '/api/sources', headers: json, payload: '' });
    expect(response).toMatchObject({ status: 400, body: { error: 'Request body is empty; expected JSON' } });
  });

  it('answers a missing body where the route expects one with 400', async () => {
    expect(await call({ method: 'POST', url: '/api/sources' })).toMatchObject({
      status: 400,
      body: { error: 'Request body must be an object' },
    });
  });

  it.each([
    ['{"name":"W","__proto__":{"isAdmin":true}}', 'JSON body must not contain the key "__proto__"'],
    ['{"a":{"b":{"__proto__":{"isAdmin":true}}}}', 'JSON body must not contain the key "__proto__"'],
    ['{"name":"W","\\u005f_proto__":{"isAdmin":true}}', 'JSON body must not contain the key "__proto__"'],
    [
      '{"constructor":{"prototype":{"isAdmin":true}}}',
      'JSON body must not contain the key "constructor.prototype"',
    ],
  ])('refuses prototype poisoning: %s', async (payload, error) => {
    expect(await call({ method: 'POST', url: '/echo', headers: json, payload })).toMatchObject({
      status: 400,
      body: { error },
    });
  });

  it('lets keys starting with $ and a plain "constructor" through (the intake decides about those)', async () => {
    const payload = { $set: { a: 1 }, constructor: 'Acme' };
    expect(await call({ method: 'POST', url: '/echo', payload })).toMatchObject({
      status: 200,
      body: { body: payload },
    });
  });

  it('answers a body over the limit with 413', async () => {
    const response = await call({ method: 'POST', url: '/echo', payload: { text: 'x'.repeat(2000) } });
    expect(response).toMatchObject({
      status: 413,
      body: { error: 'Request body is too large (limit: 1024 bytes)' },
    });
  });

  it.each(['application/xml', 'text/plain', 'application/x-www-form-urlencoded'])(
    'answers Content-Type %s with 415',
    async (contentType) => {
      const response = await call({
        method: 'POST',
        url: '/echo',
        headers: { 'content-type': contentType },
        payload: 'name=W',
      });
      expect(response).toMatchObject({
        status: 415,
        body: { error: `Unsupported Content-Type: ${contentType}; send application/json` },
      });
    },
  );
});

describe('errors', () => {
  it('answers an unknown route with 404 naming method and path', async () => {
    expect(await call({ method: 'DELETE', url: '/nope?page=1' })).toMatchObject({
      status: 404,
      body: { error: 'Not found: DELETE /nope' },
    });
  });

  it('does not echo a webhook token in a 404', async () => {
    expect((await call({ url: '/api/webhooks/tok_secret' })).body).toEqual({
      error: 'Not found: GET /api/webhooks/[REDACTED]',
    });
  });

  it('answers a malformed URL with 400', async () => {
    expect(await call({ url: '/api/leads/%E0%A4%A' })).toMatchObject({
      status: 400,
      body: { error: 'Malformed URL' },
    });
  });

  it.each([
    ['/missing', 404, 'Lead not found'],
    ['/taken', 409, 'A source with this name already exists'],
    ['/busy', 503, 'Lead store unavailable; retry shortly'],
  ])('answers an AppError with its status and message: %s', async (url, status, error) => {
    expect(await call({ url })).toMatchObject({ status, body: { error } });
  });

  it('sets Retry-After for unavailable', async () => {
    expect((await call({ url: '/busy' })).headers['retry-after']).toBe('5');
  });

  it('masks an unexpected error as 500 and logs it with the request id', async () => {
    const response = await app.inject({ url: '/boom', headers: { 'x-request-id': 'req-boom-1' } });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ error: 'Internal server error' });
    expect(response.body).not.toMatch(/hunter2|ECONNREFUSED|at .*\.ts|stack/);
    const logged = logLines.map((line) => JSON.parse(line)).find((line) => line.msg === 'Request failed');
    expect(logged).toMatchObject({
      level: 50,
      reqId: 'req-boom-1',
      err: { message: expect.stringContaining('ECONNREFUSED') },
    });
    expect(logged.err.stack).toContain('Error');
  });

  it('masks AppError internal too', async () => {
    expect(await call({ url: '/internal' })).toMatchObject({
      status: 500,
      body: { error: 'Internal server error' },
    });
  });

  it.each([
    { url: '/nope' },
    { url: '/boom' },
    { url: '/api/leads?limit=500' },
    { method: 'POST' as const, url: '/api/sources', headers: json, payload: '{' },
  ])('replies with exactly one field, error: %j', async (options) => {
    const body = (await call(options)).body as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['error']);
    expect(typeof body.error).toBe('string');
  });
});

describe('request ids', () => {
  it('echoes a sane X-Request-Id', async () => {
    const response = await call({ url: '/echo', headers: { 'x-request-id': 'gw-7f3a:42' } });
    expect(response.headers['x-request-id']).toBe('gw-7f3a:42');
  });

  it.each(['has spaces in it', 'x'.repeat(129), 'quote"d'])(
    'replaces an insane one (%s) with a UUID',
    async (id) => {
      const response = await call({ url: '/echo', headers: { 'x-request-id': id } });
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it('generates one when absent, also on errors', async () => {
    for (const url of ['/echo', '/nope', '/boom', '/api/leads?a[b]=1']) {
      expect((await call({ url })).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('an answer sent before the request body has arrived', () => {
  const lingeringCloseMs = 400;
  let listening: FastifyInstance;
  let port: number;
  let answer: () => void = () => undefined;

  beforeAll(async () => {
    listening = createHttpApp({
      logger: createLogger({ level: 'silent', name: 'test' }),
      bodyLimit: 1024,
      lingeringCloseMs,
    });
    listening.post('/echo', async (request) => ({ body: request.body }));
    listening.addHook('onResponse', async () => answer());
    await listening.listen({ port: 0, host: '127.0.0.1' });
    port = (listening.server.address() as AddressInfo).port;
  });
  afterAll(() => listening.close());

  function nextAnswer(): Promise<void> {
    return new Promise<void>((resolve) => (answer = resolve));
  }

  const head = (length: number) =>
    `POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;

  it('still reaches a client that sends the body after the 413 went out', async () => {
    const body = Buffer.alloc(2 * 1024 * 1024, 'a');
    const accepted = once(listening.server, 'connection') as Promise<[Socket]>;
    const socket = connect(port, '127.0.0.1');
    socket.pause(); // a busy client: it reads the answer only after it has written its body
    let received = '';
    socket.on('data', (chunk) => (received += String(chunk)));
    const closed = once(socket, 'close');
    const refused = nextAnswer();
    const [serverSide] = await accepted;
    socket.write(head(body.length));
    await refused;
    // The server is done with its side (ended after the answer, or destroyed outright) before the
    // body goes out: a socket closed outright would be gone by then.
    await waitFor('the server to close its side', () => serverSide.writableFinished || serverSide.destroyed);
    await new Promise<void>((resolve, reject) =>
      socket.write(body, (error) => (error ? reject(error) : resolve())),
    );
    socket.resume();
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received.toLowerCase()).toContain('connection: close');
    expect(received).toContain('{"error":"Request body is too large (limit: 1024 bytes)"}');
  });

  it('closes the connection once the client stops sending, or after the lingering time', async () => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => undefined);
    let received = '';
    socket.on('data', (chunk) => (received += String(chunk)));
    const refused = nextAnswer();
    socket.write(head(2 * 1024 * 1024)); // and never the body
    await refused;
    await once(socket, 'end'); // the answer, then the server's FIN
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        listening.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    expect(await connections()).toBe(1);
    const started = Date.now();
    await waitFor('the connection closed', async () => (await connections()) === 0, lingeringCloseMs * 10);
    expect(Date.now() - started).toBeGreaterThan(lingeringCloseMs / 2);
    socket.destroy();
  });

  it('does not hold up closing the app', async () => {
    const closing = createHttpApp({
      logger: createLogger({ level: 'silent', name: 'test' }),
      bodyLimit: 1024,
      lingeringCloseMs: 60_000,
    });
    await closing.listen({ port: 0, host: '127.0.0.1' });
    const socket = connect({
      port: (closing.server.address() as AddressInfo).port,
      host: '127.0.0.1',
      allowHalfOpen: true,
    });
    socket.on('error', () => undefined);
    socket.write(head(2 * 1024 * 1024));
    await once(socket, 'data');
    const started = Date.now();
    await closing.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    socket.destroy();
  });
});
