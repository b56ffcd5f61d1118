import { describe, expect, it } from 'vitest';
import { identityKeysOf, normalizeFields, normalizePhone } from './normalize.js';

describe('normalizeFields', () => {
  it('trims, lower-cases the e-mail, and turns the phone into E.164 when it parses', () => {
    expect(
      normalizeFields(
        { email: ' A@B.Test ', firstName: ' Ada ', lastName: '', phone: '+1 (415) 555-0100' },
        undefined,
      ),
    ).toEqual({
      email: 'a@b.test',
      firstName: 'Ada',
      lastName: null,
      company: null,
      phone: '+14155550100',
      phoneOriginal: '+1 (415) 555-0100',
    });
  });

  it.each([
    ['a@x.example, b@y.example'],
    ['a@x.example;b@y.example'],
    ['Bob <bob@x.example>'],
    ['a@x.example\r\nBcc: b@y.example'],
    ['a@x.exampleb@y.example'],
  ])('keeps no e-mail that is not one mailbox: %j', (email) => {
    expect(normalizeFields({ email, firstName: 'Bob' }, undefined)).toMatchObject({
      email: null,
      firstName: 'Bob',
    });
  });

  it('keeps a single address that merely looks wrong (enrichment judges it)', () => {
    expect(normalizeFields({ email: 'Ada@Localhost' }, undefined).email).toBe('ada@localhost');
  });

  it('parses national numbers only with a default region', () => {
    expect(normalizePhone('(415) 555-0100', undefined)).toBeNull();
    expect(normalizePhone('(415) 555-0100', 'US')).toBe('+14155550100');
    expect(normalizePhone('020 7946 0018', 'GB')).toBe('+442079460018');
    expect(normalizePhone('12', 'US')).toBeNull();
  });
});

describe('identityKeysOf', () => {
  it('matches on the e-mail, and on the phone only when it is E.164', () => {
    expect(identityKeysOf({ email: 'a@b.test', phone: '+14155550100' })).toEqual([
      'email:a@b.test',
      'phone:+14155550100',
    ]);
    expect(identityKeysOf({ email: null, phone: '(415) 555-0100' })).toEqual([]);
  });
});
