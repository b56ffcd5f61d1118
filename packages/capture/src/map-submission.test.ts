import { describe, expect, it } from 'vitest';
import { PAYLOAD_LIMITS } from './limits.js';
import { type MappedSubmission, mapSubmission } from './map-submission.js';

function mapped(payload: unknown, mappings: Parameters<typeof mapSubmission>[1] = {}): MappedSubmission {
  const result = mapSubmission(payload, mappings);
  if (!result.ok) throw new Error(`expected a mapped submission, got: ${result.error}`);
  return result.submission;
}

function rejection(payload: unknown, mappings: Parameters<typeof mapSubmission>[1] = {}): string {
  const result = mapSubmission(payload, mappings);
  if (result.ok) throw new Error(`expected a rejection, got ${JSON.stringify(result.submission)}`);
  return result.error;
}

describe('payloads real senders post', () => {
  it('a plain HTML form (flat strings, hidden utm inputs) fills the standard fields by name', () => {
    const form = {
      firstName: ' Ada ',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      message: 'Call me after 5',
      utm_source: 'newsletter',
      utm_campaign: 'spring',
      _referrer: 'https://example.org/pricing',
    };
    expect(mapped(form)).toEqual({
      fields: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
      custom: { message: 'Call me after 5' },
      attribution: {
        utm: { utm_source: 'newsletter', utm_campaign: 'spring' },
        referrer: 'https://example.org/pricing',
      },
    });
  });

  it('a Typeform webhook: answers reached by array index, the rest kept as custom data', () => {
    const typeform = {
      event_id: '01HXYZ',
      event_type: 'form_response',
      form_response: {
        form_id: 'lT4Z3j',
        submitted_at: '2024-03-01T10:00:00Z',
        hidden: { utm_source: 'ads' },
        definition: {
          id: 'lT4Z3j',
          fields: [
            { id: 'q1', type: 'email', ref: 'email', properties: {}, choices: [{ id: 'c', label: 'x' }] },
          ],
        },
        answers: [
          { type: 'email', email: 'ada@example.com', field: { id: 'q1', type: 'email', ref: 'email' } },
          { type: 'text', text: 'Ada', field: { id: 'q2', type: 'short_text', ref: 'name' } },
          { type: 'phone_number', phone_number: '+447946000000', field: { id: 'q3', ref: 'phone' } },
        ],
      },
    };
    const submission = mapped(typeform, {
      'form_response.answers.0.email': 'email',
      'form_response.answers.1.text': 'firstName',
      'form_response.answers.2.phone_number': 'phone',
    });
    expect(submission.fields).toEqual({ email: 'ada@example.com', firstName: 'Ada', phone: '+447946000000' });
    expect(submission.custom.event_id).toBe('01HXYZ');
    const response = submission.custom.form_response as { answers: Array<Record<string, unknown>> };
    expect(response.answers[0]).toEqual({ type: 'email', field: { id: 'q1', type: 'email', ref: 'email' } });
    expect(response.answers[1]).not.toHaveProperty('text');
  });

  it('Gravity Forms numbered keys ("1.3") are literal keys, not paths', () => {
    const gravity = {
      '1.3': 'Ada',
      '1.6': 'Lovelace',
      '2': 'ada@example.com',
      '3': '07946 000000',
      '5': 'Hi',
    };
    const submission = mapped(gravity, { '1.3': 'firstName', '1.6': 'lastName', '2': 'email', '3': 'phone' });
    expect(submission.fields).toEqual({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: '07946 000000',
    });
    expect(submission.custom).toEqual({ '5': 'Hi' });
  });

  it('Facebook Lead Ads field_data is kept as custom data, or mapped by index', () => {
    const lead = {
      leadgen_id: '123',
      field_data: [
        { name: 'email', values: ['ada@example.com'] },
        { name: 'full_name', values: ['Ada Lovelace'] },
      ],
    };
    expect(mapped(lead).custom).toEqual(lead);
    expect(mapped(lead, { 'field_data.0.values.0': 'email' }).fields).toEqual({ email: 'ada@example.com' });
  });

  it('HubSpot-like properties objects are reached by dotted paths', () => {
    const hubspot = {
      vid: 901,
      properties: {
        email: { value: 'ada@example.com' },
        firstname: { value: 'Ada' },
        company: { value: 'Analytical Engines' },
        hs_lead_status: { value: 'NEW' },
      },
    };
    const submission = mapped(hubspot, {
      'properties.email.value': 'email',
      'properties.firstname.value': 'firstName',
      'properties.company.value': 'company',
    });
    expect(submission.fields).toEqual({
      email: 'ada@example.com',
      firstName: 'Ada',
      company: 'Analytical Engines',
    });
    // What the mappings took is gone from custom, without empty shells left behind.
    expect(submission.custom).toEqual({ vid: 901, properties: { hs_lead_status: { value: 'NEW' } } });
  });

  it('Zapier flat JSON with numbers: a phone number sent as a number is taken as its text', () => {
    const zap = { Email: 'ada@example.com', phone: 447946000000, budget: 5000, consent: true };
    const submission = mapped(zap, { Email: 'email' });
    expect(submission.fields).toEqual({ email: 'ada@example.com', phone: '447946000000' });
    expect(submission.custom).toEqual({ budget: 5000, consent: true });
  });
});

describe('field mappings', () => {
  it('a literal key wins over the dotted reading of the same name', () => {
    const payload = { 'contact.email': 'literal@example.com', contact: { email: 'nested@example.com' } };
    const submission = mapped(payload, { 'contact.email': 'email' });
    expect(submission.fields.email).toBe('literal@example.com');
    expect(submission.custom).toEqual({ contact: { email: 'nested@example.com' } });
  });

  it('reads a literal dotted key inside a nested object ("data.json")', () => {
    const payload = { 'data.json': { lead: { mail: 'ada@example.com' } } };
    expect(mapped(payload, { 'data.json.lead.mail': 'email' }).fields).toEqual({ email: 'ada@example.com' });
  });

  it('a mapped source field does not also appear in custom, and is not read as a standard field', () => {
    const submission = mapped(
      { email: 'Ada', work_email: 'ada@example.com' },
      {
        email: 'firstName',
        work_email: 'email',
      },
    );
    expect(submission).toEqual({
      fields: { firstName: 'Ada', email: 'ada@example.com' },
      custom: {},
      attribution: {},
    });
  });

  it('a mapping wins over a standard field sent under its own name, which is kept as custom data', () => {
    const submission = mapped({ email: 'old@example.com', mail: 'new@example.com' }, { mail: 'email' });
    expect(submission.fields).toEqual({ email: 'new@example.com' });
    expect(submission.custom).toEqual({ email: 'old@example.com' });
  });

  it('the first of two mappings onto one field wins; the second value stays as custom data', () => {
    const submission = mapped(
      { a: 'first@example.com', b: 'second@example.com' },
      { a: 'email', b: 'email' },
    );
    expect(submission.fields).toEqual({ email: 'first@example.com' });
    expect(submission.custom).toEqual({ b: 'second@example.com' });
  });

  it('a mapping whose field is missing from the payload is skipped', () => {
    expect(
      mapped({ email: 'ada@example.com' }, { 'contact.phone': 'phone', 'x.0': 'company' }).fields,
    ).toEqual({
      email: 'ada@example.com',
    });
  });

  it('standard field names are exact: aliases such as "Email" or "first_name" are custom data', () => {
    expect(mapped({ Email: 'ada@example.com', first_name: 'Ada' })).toEqual({
      fields: {},
      custom: { Email: 'ada@example.com', first_name: 'Ada' },
      attribution: {},
    });
  });

  it('does not follow inherited properties of the payload', () => {
    const submission = mapped({ a: { b: 1 } }, { 'a.constructor.name': 'email', 'a.toString': 'company' });
    expect(submission.fields).toEqual({});
    expect(submission.custom).toEqual({ a: { b: 1 } });
  });

  it('rejects a mapping onto a field that is not a standard lead field', () => {
    const mappings = JSON.parse('{"mail":"emailAddress"}') as Parameters<typeof mapSubmission>[1];
    expect(rejection({ mail: 'ada@example.com' }, mappings)).toBe(
      'Field mapping mail targets an unknown field: emailAddress',
    );
  });
});

describe('standard field values', () => {
  it.each([
    [{ email: { value: 'a@b.c' } }, {}, 'email must be a string'],
    [{ phone: ['1', '2'] }, {}, 'phone must be a string'],
    [{ company: true }, {}, 'company must be a string'],
    [
      { contact: { mail: ['a@b.c', 'b@c.d'] } },
      { 'contact.mail': 'email' },
      'contact.mail (mapped to email) must be a string',
    ],
  ] as const)(
    'an object, array or boolean is an error naming the field: %j',
    (payload, mappings, message) => {
      expect(rejection(payload, mappings)).toBe(message);
    },
  );

  it('null, empty and blank strings are absent', () => {
    expect(mapped({ email: 'ada@example.com', firstName: null, lastName: '', company: '   ' })).toEqual({
      fields: { email: 'ada@example.com' },
      custom: {},
      attribution: {},
    });
  });

  it.each([
    ['email', 320],
    ['firstName', 100],
    ['lastName', 100],
    ['phone', 50],
    ['company', 255],
  ] as const)('%s is capped at %i characters (counted as characters, not bytes)', (field, max) => {
    expect(mapped({ [field]: '€'.repeat(max) }).fields[field]).toHaveLength(max);
    expect(rejection({ [field]: 'x'.repeat(max + 1) })).toBe(`${field} must be at most ${max} characters`);
  });
});

describe('the e-mail field holds one mailbox at most (no mail relay through a public form)', () => {
  const SPACES = 'must be a single e-mail address, without spaces or control characters';
  const SYNTAX = 'must be a single e-mail address, without a name, brackets, quotes, commas or semicolons';
  const SEVERAL = 'must be a single e-mail address (it holds more than one @)';

  it.each([
    ['a@x.com, b@y.com; c@z.com', SPACES],
    ['a@x.com,b@y.com', SYNTAX],
    ['a@x.com;b@y.com', SYNTAX],
    ['a,b@x.com', SYNTAX],
    ['Bob <b@x.com>', SPACES],
    ['Bob<b@x.com>', SYNTAX],
    ['<b@x.com>', SYNTAX],
    ['a@x.com<b@y.com>', SYNTAX],
    ['a@x.com(b@y.com)', SYNTAX],
    ['g:a@x.com', SYNTAX],
    ['"a@x.com,b"@y.com', SYNTAX],
    ['"john.doe"@example.com', SYNTAX],
    ['john\\@doe@example.com', SYNTAX],
    ['a@[192.0.2.1]', SYNTAX],
    ['a@x.com b@y.com', SPACES],
    ['a@x.com\tb@y.com', SPACES],
    ['a@x.com\nBcc: b@y.com', SPACES],
    ['a@x.com\u2028b@y.com', SPACES],
    ['a@x.com\u00a0b@y.com', SPACES],
    ['a@x.com\u0000b@y.com', SPACES],
    ['a\u200b@x.com', SPACES],
    ['a@x.comb@y.com', SEVERAL],
    ['a@b@c.com', SEVERAL],
  ])('%j is refused, naming the field', (email, problem) => {
    expect(rejection({ email, firstName: 'Ada' })).toBe(`email ${problem}`);
  });

  it('names a mapped field by its source name', () => {
    expect(rejection({ contact: { mail: 'a@x.com;b@y.com' } }, { 'contact.mail': 'email' })).toBe(
      `contact.mail (mapped to email) must be a single e-mail address, without a name, brackets, quotes, commas or semicolons`,
    );
  });

  it.each([
    ['ada@example.com'],
    ['ada.lovelace+crm@mail.example.co.uk'],
    ["o'brien@example.ie"],
    // International domains and local parts are one mailbox each: kept; the transport decides what it can send to.
    ['jörg@bücher.de'],
    ['ада@пример.рф'],
    ['ada@xn--bcher-kva.de'],
    // A single address that merely looks wrong is still a lead; enrichment reports it as invalid.
    ['ada@localhost'],
    ['ada.example.com'],
    ['ada@'],
  ])('%j is kept as the lead e-mail', (email) => {
    expect(mapped({ email: ` ${email} ` }).fields.email).toBe(email);
  });

  it('leaves a list in a field that is not the e-mail alone (custom data is never mailed)', () => {
    expect(mapped({ email: 'ada@example.com', cc: 'a@x.com, b@y.com' }).custom).toEqual({
      cc: 'a@x.com, b@y.com',
    });
  });
});

describe('attribution', () => {
  it('_utm keeps only the utm_* parameters', () => {
    const submission = mapped({
      email: 'ada@example.com',
      _utm: { utm_source: 'google', utm_medium: 'cpc', utm_term: ' crm ', gclid: 'abc', utm_content: '' },
    });
    expect(submission.attribution).toEqual({
      utm: { utm_source: 'google', utm_medium: 'cpc', utm_term: 'crm' },
    });
    expect(submission.custom).toEqual({});
  });

  it('_utm wins over a hidden utm_* field of the same name, which stays custom data', () => {
    const submission = mapped({ email: 'a@b.c', _utm: { utm_source: 'google' }, utm_source: 'form' });
    expect(submission.attribution).toEqual({ utm: { utm_source: 'google' } });
    expect(submission.custom).toEqual({ utm_source: 'form' });
  });

  it.each([
    ['google'],
    [['utm_source']],
    [{ utm_source: 1 }],
    [{ utm_source: { nested: 'x' } }],
    [{ other: true }],
  ])('_utm %j is an error', (utm) => {
    expect(rejection({ email: 'a@b.c', _utm: utm })).toBe('_utm must be an object of strings');
  });

  it('_referrer must be a string', () => {
    expect(rejection({ email: 'a@b.c', _referrer: { url: 'x' } })).toBe('_referrer must be a string');
    expect(rejection({ email: 'a@b.c', _referrer: 'x'.repeat(2049) })).toBe(
      '_referrer must be at most 2048 characters',
    );
  });

  it('attribution alone is not a usable payload', () => {
    expect(rejection({ _utm: { utm_source: 'google' }, _referrer: 'https://example.org' })).toBe(
      'Payload has no usable fields',
    );
  });
});

describe('the payload as a whole', () => {
  it.each([[null], [[{ email: 'a@b.c' }]], ['email=a@b.c'], [42], [new Date()]])(
    '%j is not a JSON object',
    (payload) => {
      expect(rejection(payload)).toBe('Payload must be a JSON object');
    },
  );

  it.each([[{}], [{ email: '', message: null, note: ' ' }]])('%j has no usable fields', (payload) => {
    expect(rejection(payload)).toBe('Payload has no usable fields');
  });

  it('custom data alone is a usable payload', () => {
    expect(mapped({ message: 'Call me' }).custom).toEqual({ message: 'Call me' });
  });
});

describe('custom data a document store can hold safely', () => {
  it('renames "." and a leading "$", and drops prototype keys wherever they are', () => {
    const payload = JSON.parse(
      '{"email":"a@b.c","$where":"1","a.b":1,"x$y":2,"__proto__":{"admin":true},' +
        '"nested":{"constructor":{"prototype":{"admin":true}},"$gt":"","prototype":1,"ok":"yes"}}',
    );
    const submission = mapped(payload);
    expect(submission.custom).toEqual({ _where: '1', a_b: 1, x$y: 2, nested: { _gt: '', ok: 'yes' } });
    expect(Object.getPrototypeOf(submission.custom)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('keeps both values when renaming makes two keys collide', () => {
    expect(mapped({ 'a.b': 1, a_b: 2 }).custom).toEqual({ a_b: 1, a_b_2: 2 });
  });

  it(`rejects more than ${PAYLOAD_LIMITS.maxKeysPerObject} fields in one object`, () => {
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    expect(rejection(wide)).toBe('Custom data has more than 100 fields');
    expect(rejection({ email: 'a@b.c', extra: wide })).toBe('Custom field extra has more than 100 fields');
  });

  it(`accepts a payload nested ${PAYLOAD_LIMITS.maxDepth} levels deep and rejects deeper`, () => {
    const nest = (levels: number): Record<string, unknown> => {
      let value: Record<string, unknown> = { leaf: 'x' };
      for (let level = 1; level < levels; level++) value = { down: value };
      return value;
    };
    expect(mapped(nest(PAYLOAD_LIMITS.maxDepth)).custom).toBeDefined();
    expect(rejection(nest(PAYLOAD_LIMITS.maxDepth + 1))).toBe('Payload is nested more than 10 levels deep');
  });

  it('rejects hostile nesting anywhere, even under a key that would be dropped, without exhausting the stack', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    for (const body of [`{"a":${deep}}`, `{"email":"a@b.c","constructor":${deep}}`]) {
      expect(rejection(JSON.parse(body))).toBe('Payload is nested more than 10 levels deep');
    }
  });

  it('rejects custom data over 32 KiB', () => {
    expect(rejection({ email: 'a@b.c', notes: 'x'.repeat(33_000) })).toBe(
      'Custom data is larger than 32 KiB',
    );
    expect(mapped({ notes: 'x'.repeat(30_000) }).custom.notes).toHaveLength(30_000);
  });
});
