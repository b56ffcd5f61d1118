import { describe, expect, it } from 'vitest';
import { countForegroundMarks, randomToken, startIntake, waitFor } from './harness.js';
import { form, intake, receivedFor, useIntake } from './webhook-fixtures.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

useIntake();

describe('accepting a lead', () => {
  it('answers 200 {success: true} and publishes lead.received with the mapped lead', async () => {
    const source = await intake.addSource({ name: 'Pricing page', fieldMappings: { work_email: 'email' } });
    const response = await intake.post(
      source.token,
      {
        work_email: ' ada@example.com ',
        firstName: 'Ada',
        budget: 5000,
        _utm: { utm_source: 'google', utm_campaign: 'spring' },
        _referrer: 'https://example.org/pricing',
      },
      { 'user-agent': 'Zapier' },
    );
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true });

    const [event] = await receivedFor(source.sourceId, 1);
    expect(event.type).toBe('lead.received');
    expect(event.data).toEqual({
      submissionId: expect.stringMatching(UUID),
      sourceId: source.sourceId,
      sourceName: 'Pricing page',
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      origin: 'webhook',
      fields: { email: 'ada@example.com', firstName: 'Ada' },
      custom: { budget: 5000 },
      attribution: {
        utm: { utm_source: 'google', utm_campaign: 'spring' },
        referrer: 'https://example.org/pricing',
      },
      client: { ip: '127.0.0.1', userAgent: 'Zapier' },
    });
    expect(event.correlationId).toBe(event.data.submissionId);
  });

  it('holds the chain of its process back from each webhook read until it is answered (senders first)', async () => {
    const source = await intake.addSource();
    const begun = countForegroundMarks(intake);
    const answers = await Promise.all([
      intake.post(source.token, { email: 'first@example.com' }),
      intake.post(randomToken(), { email: 'unknown@example.com' }),
      intake.post(source.token, 'not json', { 'content-type': 'application/json' }),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 404, 400]);
    // The unknown token and the unreadable body are refused before the body is taken: not waited for.
    expect(begun()).toBe(1);
    expect(intake.bus.foreground!.inFlight).toBe(0);
  });

  it('answers the same at /api/webhooks/inbound/<token>, the shape of the source webhookUrl', async () => {
    const source = await intake.addSource();
    const response = await intake.app.inject({
      method: 'POST',
      url: `/api/webhooks/inbound/${source.token}`,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ email: 'inbound@example.com' }),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true });
    const [event] = await receivedFor(source.sourceId, 1);
    expect(event.data.fields).toEqual({ email: 'inbound@example.com' });
  });

  it('takes a plain HTML form post: repeated fields become a list, hidden utm_* fields attribution', async () => {
    const source = await intake.addSource();
    const response = await form(
      source.token,
      'firstName=Ada&lastName=Lovelace&email=ada%40example.com&message=Hello+there%21' +
        '&interests=crm&interests=api&utm_source=newsletter&utm_medium=email',
    );
    expect(response.statusCode).toBe(200);
    const [event] = await receivedFor(source.sourceId, 1);
    expect(event.data.fields).toEqual({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
    expect(event.data.custom).toEqual({ message: 'Hello there!', interests: ['crm', 'api'] });
    expect(event.data.attribution).toEqual({ utm: { utm_source: 'newsletter', utm_medium: 'email' } });
  });

  it('maps the payloads real tools send: Typeform, Gravity Forms, Zapier', async () => {
    const typeform = await intake.addSource({
      fieldMappings: {
        'form_response.answers.0.email': 'email',
        'form_response.answers.1.text': 'firstName',
      },
    });
    const gravity = await intake.addSource({
      fieldMappings: { '1.3': 'firstName', '1.6': 'lastName', '2': 'email' },
    });
    const zapier = await intake.addSource({ fieldMappings: { 'Phone Number': 'phone', Email: 'email' } });

    const posts = await Promise.all([
      intake.post(typeform.token, {
        event_id: 'LtWXD3crgy',
        event_type: 'form_response',
        form_response: {
          form_id: 'lT4Z3j',
          token: 'a3a12ec67a1365927098a606107fac15',
          submitted_at: '2024-03-01T10:00:00Z',
          definition: {
            id: 'lT4Z3j',
            title: 'Lead form',
            fields: [{ id: 'q1', type: 'email', ref: 'email' }],
          },
          answers: [
            { type: 'email', email: 'typeform@example.com', field: { id: 'q1', type: 'email' } },
            { type: 'text', text: 'Grace', field: { id: 'q2', type: 'short_text' } },
          ],
        },
      }),
      intake.post(gravity.token, {
        '1.3': 'Alan',
        '1.6': 'Turing',
        '2': 'alan@example.com',
        '4': 'Enigma',
        form_id: '3',
      }),
      intake.post(zapier.token, {
        Email: 'zap@example.com',
        'Phone Number': 447946000000,
        'Deal Size': 12000,
      }),
    ]);
    expect(posts.map((response) => response.statusCode)).toEqual([200, 200, 200]);

    const [fromTypeform] = await receivedFor(typeform.sourceId, 1);
    expect(fromTypeform.data.fields).toEqual({ email: 'typeform@example.com', firstName: 'Grace' });
    expect(fromTypeform.data.custom).toMatchObject({
      event_id: 'LtWXD3crgy',
      form_response: { form_id: 'lT4Z3j' },
    });
    const [fromGravity] = await receivedFor(gravity.sourceId, 1);
    expect(fromGravity.data.fields).toEqual({
      firstName: 'Alan',
      lastName: 'Turing',
      email: 'alan@example.com',
    });
    expect(fromGravity.data.custom).toEqual({ '4': 'Enigma', form_id: '3' });
    const [fromZapier] = await receivedFor(zapier.sourceId, 1);
    expect(fromZapier.data.fields).toEqual({ email: 'zap@example.com', phone: '447946000000' });
    expect(fromZapier.data.custom).toEqual({ 'Deal Size': 12000 });
  });

  it("records the client's address from X-Forwarded-For only through a trusted proxy", async () => {
    const behindProxy = await startIntake({ trustProxy: 1 });
    try {
      const source = await behindProxy.addSource();
      const headers = { 'x-forwarded-for': '203.0.113.9', 'user-agent': 'Mozilla/5.0 (form)' };
      expect((await behindProxy.post(source.token, { email: 'ip@example.com' }, headers)).statusCode).toBe(
        200,
      );
      await waitFor('the proxied submission', () => behindProxy.received.length === 1);
      expect(behindProxy.received[0]!.data).toMatchObject({
        client: { ip: '203.0.113.9', userAgent: 'Mozilla/5.0 (form)' },
      });
    } finally {
      await behindProxy.close();
    }
    const direct = await intake.addSource();
    await intake.post(direct.token, { email: 'ip@example.com' }, { 'x-forwarded-for': '203.0.113.9' });
    const [event] = await receivedFor(direct.sourceId, 1);
    expect(event.data.client).toMatchObject({ ip: '127.0.0.1' });
  });
});

describe('unknown tokens', () => {
  it('answers the same 404 for an unknown, a rotated, a deleted and an impossible token', async () => {
    const rotated = await intake.addSource();
    const newToken = randomToken();
    await intake.internal('PUT', `/internal/intake/sources/${rotated.sourceId}`, {
      sourceId: rotated.sourceId,
      name: rotated.name,
      webhookToken: newToken,
      fieldMappings: {},
      revision: 2,
    });
    const deleted = await intake.addSource();
    await intake.internal('DELETE', `/internal/intake/sources/${deleted.sourceId}`, { revision: 2 });

    const tokens = [
      randomToken(),
      rotated.token,
      deleted.token,
      'a'.repeat(300),
      'with space',
      '%00',
      'a/b/c',
      '',
    ];
    for (const token of tokens) {
      const response = await intake.post(token, { email: 'lost@example.com' });
      expect({ token, status: response.statusCode, body: response.json() }).toEqual({
        token,
        status: 404,
        body: { error: 'Unknown webhook token' },
      });
    }
    expect((await intake.post(newToken, { email: 'found@example.com' })).statusCode).toBe(200);
  });

  it('answers 404 before reading the body: a bad body on an unknown token is still a 404', async () => {
    const response = await intake.post(randomToken(), '{not json', { 'content-type': 'text/plain' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'Unknown webhook token' });
  });
});
