import { type AddressInfo, connect } from 'node:net';
import { streamUntilAnswered } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MULTIPART_LIMITS } from '../src/routes/webhooks/multipart-body.js';
import { type Harness, startIntake, type TestSource, waitFor } from './harness.js';

const BOUNDARY = '----lead-capture-test';
const MULTIPART = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
const MiB = 1024 * 1024;

/** One part of a multipart body; a file part when `file` is given. */
function part(name: string, value: string | Buffer, file?: { filename: string; type: string }): Buffer {
  const disposition = file
    ? `form-data; name="${name}"; filename="${file.filename}"\r\nContent-Type: ${file.type}`
    : `form-data; name="${name}"`;
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n`),
    Buffer.isBuffer(value) ? value : Buffer.from(value),
    Buffer.from('\r\n'),
  ]);
}

function multipart(parts: Buffer[]): Buffer {
  return Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]);
}

let intake: Harness;
let source: TestSource;
let baseUrl: string;
beforeAll(async () => {
  intake = await startIntake();
  source = await intake.addSource();
  await intake.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(intake.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await intake.close();
});

function post(body: Buffer, headers: Record<string, string> = MULTIPART) {
  return intake.post(source.token, body, headers);
}

async function submissions(outcome: string) {
  const log = await intake.asUser(
    'GET',
    `/api/sources/${source.sourceId}/submissions?outcome=${outcome}&limit=100`,
  );
  return log.json().data as Array<{ error?: string; payload: unknown }>;
}

describe('a multipart webhook (Jotform)', () => {
  it('is a lead; a file part is read and dropped, recorded as its name and type', async () => {
    const response = await post(
      multipart([
        part('email', 'multipart@example.com'),
        part('interests', 'crm'),
        part('interests', 'api'),
        part('cv', Buffer.alloc(100_000, 1), { filename: 'cv.pdf', type: 'application/pdf' }),
      ]),
    );
    expect([response.statusCode, response.json()]).toEqual([200, { success: true }]);
    await waitFor('the submission', async () => (await submissions('accepted')).length > 0);
    const [accepted] = await submissions('accepted');
    expect(accepted!.payload).toEqual({
      email: 'multipart@example.com',
      interests: ['crm', 'api'],
      cv: { filename: 'cv.pdf', mimetype: 'application/pdf' },
    });
  });

  it('40 fields of 1 MiB: 413, no lead, kept as rejected', async () => {
    const field = 'x'.repeat(MiB);
    const body = multipart(Array.from({ length: 40 }, (_, index) => part(`field${index}`, field)));
    const response = await post(body);
    expect([response.statusCode, response.json()]).toEqual([
      413,
      { error: 'Request body is too large (limit: 1048576 bytes)' },
    ]);
    expect(await submissions('rejected')).toContainEqual(
      expect.objectContaining({ error: 'Request body is too large (limit: 1048576 bytes)', payload: null }),
    );
  });

  it.each([
    [
      `${MULTIPART_LIMITS.fields + 1} fields`,
      Array.from({ length: MULTIPART_LIMITS.fields + 1 }, (_, index) => part(`f${index}`, 'x')),
      `Multipart body has more than ${MULTIPART_LIMITS.fields} fields`,
    ],
    [
      'a field over its size',
      [part('email', 'a@b.c'), part('notes', 'x'.repeat(MULTIPART_LIMITS.fieldBytes + 1))],
      `Multipart field "notes" is larger than ${MULTIPART_LIMITS.fieldBytes} bytes`,
    ],
    [
      `${MULTIPART_LIMITS.files + 1} files`,
      Array.from({ length: MULTIPART_LIMITS.files + 1 }, (_, index) =>
        part(`file${index}`, 'x', { filename: `${index}.txt`, type: 'text/plain' }),
      ),
      `Multipart body has more than ${MULTIPART_LIMITS.files} files`,
    ],
    [
      'a file over its size',
      [
        part('cv', Buffer.alloc(MULTIPART_LIMITS.fileBytes + 1), {
          filename: 'cv.pdf',
          type: 'application/pdf',
        }),
      ],
      `Multipart file "cv" is larger than ${MULTIPART_LIMITS.fileBytes} bytes`,
    ],
  ])('%s: 413', async (_case, parts, error) => {
    const response = await post(multipart(parts));
    expect([response.statusCode, response.json()]).toEqual([413, { error }]);
  });

  it('a field named __proto__, or a body that is not multipart: 400', async () => {
    const proto = await post(multipart([part('email', 'a@b.c'), part('__proto__', 'x')]));
    expect([proto.statusCode, proto.json()]).toEqual([
      400,
      { error: 'Form data must not contain the field "__proto__"' },
    ]);
    const garbage = await post(Buffer.from('no boundary here'));
    expect(garbage.statusCode).toBe(400);
    expect(garbage.json().error).toMatch(/^Malformed multipart body/);
  });

  it('a part without a name is no field: not kept as one called "undefined"', async () => {
    const nameless = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nstray\r\n`);
    const response = await post(multipart([part('email', 'nameless@example.com'), nameless]));
    expect([response.statusCode, response.json()]).toEqual([200, { success: true }]);
    const logged = async () => {
      const log = await intake.asUser('GET', `/api/sources/${source.sourceId}/submissions?limit=100`);
      const entries = log.json().data as Array<{ payload: unknown }>;
      return entries.find((entry) => JSON.stringify(entry.payload).includes('nameless@'));
    };
    await waitFor('the submission', async () => (await logged()) !== undefined);
    expect((await logged())!.payload).toEqual({ email: 'nameless@example.com' });

    const onlyNameless = await post(multipart([nameless]));
    expect([onlyNameless.statusCode, onlyNameless.json()]).toEqual([
      400,
      { error: 'Payload has no usable fields' },
    ]);
  });

  it('is refused with 413 while it streams, as soon as it passes the limit', async () => {
    const answer = await streamUntilAnswered(`${baseUrl}/api/webhooks/${source.token}`, {
      headers: MULTIPART,
      chunk: Buffer.concat([part('field', 'x'.repeat(64 * 1024))]),
      maxBytes: 40 * MiB,
    });
    expect([answer.status, JSON.parse(answer.body)]).toEqual([
      413,
      { error: 'Request body is too large (limit: 1048576 bytes)' },
    ]);
    expect(answer.headers.connection).toBe('close');
    expect(answer.sentBytes).toBeLessThan(40 * MiB);
  });

  it('a declared Content-Length over the limit is refused before the body is read', async () => {
    const answer = await streamUntilAnswered(`${baseUrl}/api/webhooks/${source.token}`, {
      headers: { ...MULTIPART, 'content-length': String(40 * MiB) },
      chunk: Buffer.alloc(1024),
      maxBytes: 1024,
    });
    expect(answer.status).toBe(413);
  });

  it('an upload abandoned half-way is a rejected delivery, not a crash', async () => {
    const abandoned = await intake.addSource();
    await new Promise<void>((resolve, reject) => {
      const socket = connect((intake.app.server.address() as AddressInfo).port, '127.0.0.1', () => {
        socket.write(
          `POST /api/webhooks/${abandoned.token} HTTP/1.1\r\nHost: x\r\n` +
            `Content-Type: ${MULTIPART['content-type']}\r\nContent-Length: 100000\r\n\r\n`,
        );
        socket.write(part('email', 'half@example.com'), () => {
          socket.destroy();
          resolve();
        });
      });
      socket.on('error', reject);
    });
    await waitFor('the abandoned upload in the log', async () => {
      const log = await intake.asUser('GET', `/api/sources/${abandoned.sourceId}/submissions`);
      return log.json().data.length === 1;
    });
    const log = await intake.asUser('GET', `/api/sources/${abandoned.sourceId}/submissions`);
    expect(log.json().data).toMatchObject([
      { outcome: 'rejected', error: 'The request body was not received whole' },
    ]);
  });

  it('still takes leads after all of the above', async () => {
    const response = await post(multipart([part('email', 'after@example.com')]));
    expect(response.statusCode).toBe(200);
  });
});
