import { createHmac } from 'node:crypto';
import type { SourceFormat, SourceReceiving } from '@lead-capture/contracts';
import { createLogger } from '@lead-capture/kit';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, randomToken, startIntake, type TestSource, waitFor } from './harness.js';

const SIGNING_SECRET = 'whsec-signing-secret-9f3a1c';
const VERIFY_TOKEN = 'meta-verify-token-5b71';
const GRAPH_TOKEN = 'EAAGraphAccessToken-c0ffee';
const SECRETS = [SIGNING_SECRET, VERIFY_TOKEN, GRAPH_TOKEN];

/** Every log line the intake writes during this file. */
const logLines: string[] = [];
let intake: Harness;

beforeAll(async () => {
  intake = await startIntake({
    logger: createLogger({
      level: 'trace',
      name: 'intake-test',
      destination: { write: (line) => logLines.push(line) },
    }),
  });
});

afterAll(async () => {
  await intake?.close();
});

const withSecrets = (format: SourceFormat, receiving: SourceReceiving = {}): Promise<TestSource> =>
  intake.addSource({
    receiving: { format, signingSecret: SIGNING_SECRET, verifyToken: VERIFY_TOKEN, ...receiving },
  });

const hmac = (data: string) => createHmac('sha256', SIGNING_SECRET).update(data);

/** Both webhook paths: the contract's and the source's webhookUrl shape. */
const PATHS = [
  ['/api/webhooks/<token>', (token: string) => `/api/webhooks/${token}`],
  ['/api/webhooks/inbound/<token>', (token: string) => `/api/webhooks/inbound/${token}`],
] as const;

describe('GET verification handshakes', () => {
  describe.each(PATHS)('on %s', (_path, urlOf) => {
    it("echoes Meta's hub.challenge as text when hub.verify_token is the source's verify token", async () => {
      const source = await withSecrets('facebook-lead-ads');
      const response = await intake.app.inject({
        method: 'GET',
        url: `${urlOf(source.token)}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=${VERIFY_TOKEN}`,
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/plain/);
      expect(response.body).toBe('1158201444');
    });

    it('answers 403 for a wrong verify token, and for a source without one', async () => {
      const source = await withSecrets('facebook-lead-ads');
      const wrong = await intake.app.inject({
        method: 'GET',
        url: `${urlOf(source.token)}?hub.mode=subscribe&hub.challenge=42&hub.verify_token=guess`,
      });
      expect(wrong.statusCode).toBe(403);
      expect(wrong.json()).toEqual({ error: 'Verification token does not match' });
      expect(wrong.body).not.toContain('42');

      const unset = await intake.addSource({ receiving: { format: 'facebook-lead-ads' } });
      const none = await intake.app.inject({
        method: 'GET',
        url: `${urlOf(unset.token)}?hub.mode=subscribe&hub.challenge=42&hub.verify_token=`,
      });
      expect(none.statusCode).toBe(403);
    });

    it("answers a plain GET (Mailchimp's check before saving the URL) with 200, and 404 for an unknown token", async () => {
      const source = await intake.addSource({ receiving: { format: 'mailchimp' } });
      const check = await intake.app.inject({ method: 'GET', url: urlOf(source.token) });
      expect(check.statusCode).toBe(200);
      expect(check.json()).toEqual({ success: true });
      const unknown = await intake.app.inject({ method: 'GET', url: urlOf(randomToken()) });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toEqual({ error: 'Unknown webhook token' });
    });
  });
});

interface Scheme {
  format: SourceFormat;
  payload: Record<string, unknown>;
  /** The headers the tool sends, computed as its documentation says (null: the secret goes in the body). */
  sign: (body: string, now: Date) => Record<string, string>;
  /** For the body-key schemes: the payload with the key in it. */
  keyed?: (secret: string) => Record<string, unknown>;
}

const EMAIL = 'ada@example.com';
const SCHEMES: Scheme[] = [
  {
    // https://developers.facebook.com/docs/graph-api/webhooks/getting-started (X-Hub-Signature-256: sha256=<hex>)
    format: 'facebook-lead-ads',
    payload: { field_data: [{ name: 'email', values: [EMAIL] }] },
    sign: (body) => ({ 'x-hub-signature-256': `sha256=${hmac(body).digest('hex')}` }),
  },
  {
    // https://www.typeform.com/developers/webhooks/secure-your-webhooks/ (sha256=<base64>)
    format: 'typeform',
    payload: {
      form_response: { answers: [{ type: 'email', email: EMAIL, field: { id: 'f1', type: 'email' } }] },
    },
    sign: (body) => ({ 'typeform-signature': `sha256=${hmac(body).digest('base64')}` }),
  },
  {
    // https://tally.so/help/webhooks (Tally-Signature: base64 HMAC-SHA256 of the JSON payload, no prefix)
    format: 'tally',
    payload: { data: { fields: [{ key: 'question_1', label: 'Email', type: 'INPUT_EMAIL', value: EMAIL }] } },
    sign: (body) => ({ 'tally-signature': hmac(body).digest('base64') }),
  },
  {
    // https://developer.calendly.com/api-docs/overview/webhooks/webhook-signatures
    // (Calendly-Webhook-Signature: t=<unix s>,v1=<hex HMAC of "t.body">)
    format: 'calendly',
    payload: { event: 'invitee.created', payload: { email: EMAIL, name: 'Ada Lovelace' } },
    sign: (body, now) => {
      const t = Math.floor(now.getTime() / 1000);
      return { 'calendly-webhook-signature': `t=${t},v1=${hmac(`${t}.${body}`).digest('hex')}` };
    },
  },
  {
    // https://developers.webflow.com/data/docs/working-with-webhooks and webflow/js-webflow-api
    // verifySignature (hex HMAC of "timestamp:body", timestamp in ms)
    format: 'webflow',
    payload: { triggerType: 'form_submission', payload: { name: 'Contact', data: { Email: EMAIL } } },
    sign: (body, now) => {
      const timestamp = String(now.getTime());
      return {
        'x-webflow-timestamp': timestamp,
        'x-webflow-signature': hmac(`${timestamp}:${body}`).digest('hex'),
      };
    },
  },
  {
    // https://learn.microsoft.com/en-us/linkedin/shared/api-guide/webhook-validation: X-LI-Signature is
    // the HMACSHA256 (hex) of the POST body prefixed by "hmacsha256=", keyed with the client secret.
    format: 'linkedin',
    payload: {
      form: { content: { questions: [{ questionId: 3, name: 'email', predefinedField: 'EMAIL' }] } },
      formResponse: {
        answers: [{ questionId: 3, answerDetails: { textQuestionAnswer: { answer: EMAIL } } }],
      },
    },
    sign: (body) => ({ 'x-li-signature': hmac(`hmacsha256=${body}`).digest('hex') }),
  },
  {
    // Our own scheme for formats whose tool signs nothing.
    format: 'generic',
    payload: { email: EMAIL },
    sign: (body) => ({ 'x-signature-256': `sha256=${hmac(body).digest('hex')}` }),
  },
];

function schemeOf(format: SourceFormat): Scheme {
  const scheme = SCHEMES.find((candidate) => candidate.format === format);
  if (!scheme) throw new Error(`No signing scheme under test for ${format}`);
  return scheme;
}

async function submissionsOf(source: TestSource): Promise<Array<Record<string, unknown>>> {
  const response = await intake.asUser('GET', `/api/sources/${source.sourceId}/submissions`);
  return response.json().data;
}

const postRaw = (source: TestSource, body: string, headers: Record<string, string>) =>
  intake.app.inject({
    method: 'POST',
    url: `/api/webhooks/inbound/${source.token}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });

function expectUnauthorized(response: LightMyRequestResponse, error: string | RegExp): void {
  expect(response.statusCode).toBe(401);
  expect(response.json()).toEqual({ error: expect.stringMatching(error) });
}

describe('signed deliveries', () => {
  it.each(SCHEMES)(
    '$format: a good signature is accepted; a bad or missing one is 401 and logged',
    async (scheme) => {
      const source = await withSecrets(scheme.format);
      const body = JSON.stringify(scheme.payload);
      const good = await postRaw(source, body, scheme.sign(body, new Date()));
      expect(good.statusCode).toBe(200);
      expect(good.json()).toEqual({ success: true });

      // Signed over another body (a tampered delivery), and not signed at all.
      const tampered = scheme.sign(`${body} `, new Date());
      expectUnauthorized(await postRaw(source, body, tampered), /^Invalid signature$/);
      expectUnauthorized(await postRaw(source, body, {}), /^Missing /);

      await intake.drained();
      expect(
        intake.received.filter((event) => (event.data as { sourceId: string }).sourceId === source.sourceId),
      ).toHaveLength(1);
      const log = await submissionsOf(source);
      expect(log.map((entry) => [entry.outcome, entry.error])).toEqual([
        ['rejected', expect.stringMatching(/^Missing /)],
        ['rejected', 'Invalid signature'],
        ['accepted', undefined],
      ]);
    },
  );

  it.each(SCHEMES.filter(({ format }) => ['generic', 'typeform', 'calendly'].includes(format)))(
    '$format: a captured signed delivery sent again under a new Idempotency-Key makes no second lead',
    async (scheme) => {
      const source = await withSecrets(scheme.format);
      const body = JSON.stringify(scheme.payload);
      const signature = scheme.sign(body, new Date());
      const first = await postRaw(source, body, { ...signature, 'idempotency-key': 'delivery-1' });
      const replayed = await Promise.all(
        ['delivery-2', 'replay-3'].map((key) =>
          postRaw(source, body, { ...signature, 'idempotency-key': key }),
        ),
      );
      const unkeyed = await postRaw(source, body, signature);
      expect([first, ...replayed, unkeyed].map((response) => response.statusCode)).toEqual([
        200, 200, 200, 200,
      ]);

      await intake.drained();
      expect(
        intake.received.filter((event) => (event.data as { sourceId: string }).sourceId === source.sourceId),
      ).toHaveLength(1);
      const log = await submissionsOf(source);
      expect(log.map((entry) => entry.outcome).sort()).toEqual([
        'accepted',
        'duplicate_delivery',
        'duplicate_delivery',
        'duplicate_delivery',
      ]);
    },
  );

  it('a signed source still knows a delivery by its Idempotency-Key: another signed body under it is a repeat', async () => {
    const source = await withSecrets('generic');
    const sign = schemeOf('generic').sign;
    const first = JSON.stringify({ email: EMAIL, attempt: 1 });
    const retried = JSON.stringify({ email: EMAIL, attempt: 2 });
    const key = { 'idempotency-key': 'order-42' };
    expect((await postRaw(source, first, { ...sign(first, new Date()), ...key })).statusCode).toBe(200);
    expect((await postRaw(source, retried, { ...sign(retried, new Date()), ...key })).statusCode).toBe(200);
    await intake.drained();
    expect(
      intake.received.filter((event) => (event.data as { sourceId: string }).sourceId === source.sourceId),
    ).toHaveLength(1);
  });

  it('calendly and webflow: a signature older than five minutes is 401', async () => {
    for (const scheme of SCHEMES.filter(({ format }) => format === 'calendly' || format === 'webflow')) {
      const source = await withSecrets(scheme.format);
      const body = JSON.stringify(scheme.payload);
      const old = new Date(Date.now() - 10 * 60_000);
      expectUnauthorized(
        await postRaw(source, body, scheme.sign(body, old)),
        'Signature timestamp is too old',
      );
    }
  });

  it("each tool's own tolerance: a four-minute-old signature is too old for Calendly (3 min), not for Webflow (5 min)", async () => {
    const fourMinutesAgo = () => new Date(Date.now() - 4 * 60_000);
    const calendly = schemeOf('calendly');
    const calendlyBody = JSON.stringify(calendly.payload);
    expectUnauthorized(
      await postRaw(
        await withSecrets('calendly'),
        calendlyBody,
        calendly.sign(calendlyBody, fourMinutesAgo()),
      ),
      'Signature timestamp is too old',
    );
    const webflow = schemeOf('webflow');
    const webflowBody = JSON.stringify(webflow.payload);
    const accepted = await postRaw(
      await withSecrets('webflow'),
      webflowBody,
      webflow.sign(webflowBody, fourMinutesAgo()),
    );
    expect(accepted.statusCode).toBe(200);
  });

  it('linkedin: the digest covers "hmacsha256=" + body; a digest of the bare body is refused', async () => {
    const source = await withSecrets('linkedin');
    const body = JSON.stringify(schemeOf('linkedin').payload);
    expectUnauthorized(
      await postRaw(source, body, { 'x-li-signature': hmac(body).digest('hex') }),
      /^Invalid signature$/,
    );
    expectUnauthorized(
      await postRaw(source, body, { 'x-li-signature': `hmacsha256=${hmac(body).digest('hex')}` }),
      /^Invalid signature$/,
    );
    // The header written with the prefix (one reading of LinkedIn's sentence) is still this digest.
    const prefixed = await postRaw(source, body, {
      'x-li-signature': `hmacsha256=${hmac(`hmacsha256=${body}`).digest('hex').toUpperCase()}`,
    });
    expect(prefixed.statusCode).toBe(200);
  });

  it.each([
    ['google-ads', 'google_key', { user_column_data: [{ column_id: 'EMAIL', string_value: EMAIL }] }],
    ['formstack', 'HandshakeKey', { email: EMAIL }],
  ] as const)(
    '%s: the key in the body must equal the secret, and is never kept',
    async (format, field, payload) => {
      const source = await withSecrets(format);
      const good = await intake.post(source.token, { ...payload, [field]: SIGNING_SECRET });
      expect(good.statusCode).toBe(200);
      expectUnauthorized(
        await intake.post(source.token, { ...payload, [field]: 'guess' }),
        `Invalid ${field}`,
      );
      expectUnauthorized(await intake.post(source.token, payload), `Missing ${field}`);
      await intake.drained();
      const [event] = intake.received.filter(
        (item) => (item.data as { sourceId: string }).sourceId === source.sourceId,
      );
      expect(event?.data).toMatchObject({ fields: { email: EMAIL } });
      expect(JSON.stringify(event?.data)).not.toContain(SIGNING_SECRET);
    },
  );

  it('a source without a signing secret takes unsigned deliveries; clearing the secret (null) stops the check', async () => {
    const source = await withSecrets('typeform');
    const body = JSON.stringify(SCHEMES[1]?.payload);
    expect((await postRaw(source, body, {})).statusCode).toBe(401);
    const cleared = await intake.internal('PUT', `/internal/intake/sources/${source.sourceId}`, {
      sourceId: source.sourceId,
      name: source.name,
      webhookToken: source.token,
      fieldMappings: {},
      format: 'typeform',
      signingSecret: null,
      revision: 2,
    });
    expect(cleared.statusCode).toBe(204);
    expect((await postRaw(source, body, {})).statusCode).toBe(200);
    // An older event that still carried the secret does not bring it back.
    await intake.internal('PUT', `/internal/intake/sources/${source.sourceId}`, {
      sourceId: source.sourceId,
      name: source.name,
      webhookToken: source.token,
      fieldMappings: {},
      format: 'typeform',
      signingSecret: SIGNING_SECRET,
      revision: 1,
    });
    expect((await postRaw(source, body, {})).statusCode).toBe(200);
  });
});

describe('secrets', () => {
  it('are never in an answer, the submissions log or a log line', async () => {
    const source = await withSecrets('facebook-lead-ads', { graphAccessToken: GRAPH_TOKEN });
    const body = JSON.stringify(SCHEMES[0]?.payload);
    await postRaw(source, body, { 'x-hub-signature-256': 'sha256=00' });
    await intake.app.inject({
      method: 'GET',
      url: `/api/webhooks/${source.token}?hub.mode=subscribe&hub.challenge=1&hub.verify_token=wrong`,
    });
    const answers = [
      await intake.asUser('GET', `/api/sources/${source.sourceId}/submissions`),
      await postRaw(source, body, {}),
    ];
    await waitFor('a log line', () => logLines.length > 0);
    for (const text of [...answers.map((answer) => answer.body), ...logLines]) {
      for (const secret of SECRETS) expect(text).not.toContain(secret);
    }
  });
});
