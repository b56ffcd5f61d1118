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
