import { describe, expect, it } from 'vitest';
import { mapped } from './formats.test-helpers.js';
import { mapSubmission } from './map-submission.js';

describe('mappings that survive real forms', () => {
  it('selects array items by key, whatever their order', () => {
    const payload = {
      fields: [
        { name: 'phone', value: '555' },
        { name: 'email', value: 'ada@example.com' },
      ],
    };
    const submission = mapped('generic', payload, {
      'fields[name=email].value': 'email',
      'fields[name=phone].value': 'phone',
    });
    expect(submission.fields).toEqual({ email: 'ada@example.com', phone: '555' });
    expect(submission.custom).toEqual({ fields: [{ name: 'phone' }, { name: 'email' }] });
  });

  it('selects by a nested key and by question text ignoring case', () => {
    const payload = {
      answers: [{ field: { ref: 'mail' }, email: 'ada@example.com' }],
      questions_and_answers: [{ question: 'Company Name', answer: 'Acme' }],
    };
    expect(
      mapped('generic', payload, {
        'answers[field.ref=mail].email': 'email',
        'questions_and_answers[question=company name].answer': 'company',
      }).fields,
    ).toEqual({ email: 'ada@example.com', company: 'Acme' });
  });

  it('reads into a JSON string field; the field stays in custom as sent', () => {
    const payload = { rawRequest: '{"q4_email":"ada@example.com","q6":"hi"}' };
    const submission = mapped('generic', payload, { 'rawRequest.q4_email': 'email' });
    expect(submission.fields).toEqual({ email: 'ada@example.com' });
    expect(submission.custom).toEqual(payload);
  });

  it('splits a full name; an explicit first or last name wins', () => {
    expect(mapped('generic', { Name: 'Lovelace, Ada' }, { Name: 'fullName' }).fields).toEqual({
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    expect(mapped('generic', { n: 'Ada Lovelace', lastName: 'King' }, { n: 'fullName' }).fields).toEqual({
      lastName: 'King',
      firstName: 'Ada',
    });
  });

  it('maps onto attribution: utm, referrer, landing page, click ids', () => {
    const submission = mapped(
      'generic',
      {
        email: 'a@b.c',
        src: 'google',
        ref: 'https://g.co',
        page: 'https://example.org/lp',
        click: 'Cj0K',
        fb: 'IwAR',
      },
      { src: 'utm_source', ref: 'referrer', page: 'landingPage', click: 'gclid', fb: 'fbclid' },
    );
    expect(submission.attribution).toEqual({
      utm: { utm_source: 'google' },
      referrer: 'https://g.co',
      landingPage: 'https://example.org/lp',
      clickIds: { gclid: 'Cj0K', fbclid: 'IwAR' },
    });
    expect(submission.custom).toEqual({});
  });

  it('a source mapping wins over what the format suggests', () => {
    const submission = mapped(
      'zapier',
      { Email: 'old@example.com', 'Work Email': 'new@example.com' },
      { 'Work Email': 'email' },
    );
    expect(submission.fields).toEqual({ email: 'new@example.com' });
    expect(submission.custom).toEqual({ Email: 'old@example.com' });
  });

  it('a top-level array is refused by the generic format and by formats that expect an object', () => {
    for (const format of ['generic', 'typeform'] as const) {
      expect(mapSubmission([{ name: 'Email', value: 'a@b.c' }], {}, format)).toEqual({
        ok: false,
        error: 'Payload must be a JSON object',
      });
    }
  });
});

describe('a mapping names a field by its flat name or by its path in the raw payload', () => {
  const jotform = {
    formID: '213456789012345',
    rawRequest: JSON.stringify({ q4_email: 'ada@example.com', q7_workEmail: 'ada@work.example' }),
  };

  it("a raw path works once a format is set (the README's rawRequest.q4_email)", () => {
    const byRaw = mapped('jotform', jotform, { 'rawRequest.q7_workEmail': 'email' });
    expect(byRaw.fields).toEqual({ email: 'ada@work.example' });
    // The flat field read from that path is taken with it, not kept twice; the other stays.
    expect(byRaw.custom).toEqual({ formID: '213456789012345', email: 'ada@example.com' });
    const byFlat = mapped('jotform', jotform, { workEmail: 'email' });
    expect(byFlat.fields).toEqual({ email: 'ada@work.example' });
    expect(byFlat.custom).toEqual(byRaw.custom);
  });

  it("raw paths with selectors into a tool's arrays (HubSpot fields[name=...])", () => {
    const submission = mapped(
      'hubspot-forms',
      {
        fields: [
          { name: 'email', value: 'a@x.test' },
          { name: 'mobilephone', value: '+1 555' },
        ],
      },
      { 'fields[name=mobilephone].value': 'phone' },
    );
    expect(submission.fields).toEqual({ email: 'a@x.test', phone: '+1 555' });
    expect(submission.custom).toEqual({});
  });

  it('a raw path into part of an object a format keeps whole takes only that part', () => {
    const submission = mapped(
      'facebook-lead-ads',
      {
        field_data: [{ name: 'email', values: ['a@x.test'] }],
        extra: { rep: 'Grace', region: 'EMEA' },
      },
      { 'extra.rep': 'company' },
    );
    expect(submission.fields).toEqual({ email: 'a@x.test', company: 'Grace' });
    expect(submission.custom).toEqual({ extra: { region: 'EMEA' } });
  });
});

describe('nameSplit', () => {
  const lead = { field_data: [{ name: 'full_name', values: ['Tomás Herrera Vidal'] }] };

  it.each([
    [undefined, { firstName: 'Tomás', lastName: 'Herrera Vidal' }],
    ['first-word', { firstName: 'Tomás', lastName: 'Herrera Vidal' }],
    ['last-word', { firstName: 'Tomás Herrera', lastName: 'Vidal' }],
    ['as-is', { firstName: 'Tomás Herrera Vidal' }],
  ] as const)('%s: %j', (nameSplit, fields) => {
    const result = mapSubmission(
      lead,
      {},
      { format: 'facebook-lead-ads', ...(nameSplit ? { nameSplit } : {}) },
    );
    expect(result.ok && result.submission.fields).toEqual(fields);
  });
});
