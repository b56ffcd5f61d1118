import { describe, expect, it } from 'vitest';
import { parseEmailAddress } from './address.js';

describe('parseEmailAddress', () => {
  it.each([
    ['jane@acme.com', 'jane', 'acme.com'],
    ['  Jane.Doe@Example.COM ', 'Jane.Doe', 'example.com'],
    ['jane+newsletter@mail.acme.co.uk', 'jane+newsletter', 'mail.acme.co.uk'],
    ["o'brien@acme.ie", "o'brien", 'acme.ie'],
    ['a!#$%&*/=?^_`{|}~-b@x.io', 'a!#$%&*/=?^_`{|}~-b', 'x.io'],
    ['jane@münchen.de', 'jane', 'xn--mnchen-3ya.de'],
    ['jane@xn--mnchen-3ya.de', 'jane', 'xn--mnchen-3ya.de'],
    ['jane@a-b.c-d.museum', 'jane', 'a-b.c-d.museum'],
    [`${'a'.repeat(64)}@acme.com`, 'a'.repeat(64), 'acme.com'],
  ])('accepts %s', (input, localPart, domain) => {
    expect(parseEmailAddress(input)).toEqual({ valid: true, localPart, domain });
  });

  it.each([
    [null, 'missing'],
    ['', 'missing'],
    ['   ', 'missing'],
    ['jane.acme.com', 'no_at_sign'],
    ['@acme.com', 'local_part'],
    ['.jane@acme.com', 'local_part'],
    ['jane.@acme.com', 'local_part'],
    ['ja..ne@acme.com', 'local_part'],
    ['ja ne@acme.com', 'local_part'],
    ['"jane doe"@acme.com', 'local_part'],
    ['jane@doe@acme.com', 'local_part'],
    [`${'a'.repeat(65)}@acme.com`, 'local_part'],
    ['jane@', 'domain'],
    ['jane@acme', 'domain'],
    ['jane@acme.', 'domain'],
    ['jane@.acme.com', 'domain'],
    ['jane@acme..com', 'domain'],
    ['jane@-acme.com', 'domain'],
    ['jane@acme-.com', 'domain'],
    ['jane@acme_corp.com', 'domain'],
    ['jane@[192.0.2.1]', 'domain'],
    ['jane@192.0.2.1', 'domain'],
    ['jane@ex%41mple.com', 'domain'],
    ['jane@acme.com/x', 'domain'],
    [`jane@${'a'.repeat(64)}.com`, 'domain'],
    // 69 characters, a label of 79 once in punycode.
    [`jane@${'añbécídófüg'.repeat(6)}.de`, 'domain'],
    [
      `${'a'.repeat(60)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(60)}.com`,
      'too_long',
    ],
  ])('refuses %j (%s)', (input, problem) => {
    expect(parseEmailAddress(input)).toEqual({ valid: false, problem });
  });

  it('answers hostile inputs at once, whatever their length', () => {
    const hostile = [
      `${'a'.repeat(100_000)}@acme.com`,
      `${'a.'.repeat(50_000)}@acme.com`,
      `jane@${'a-'.repeat(50_000)}.com`,
      '@'.repeat(100_000),
      `${'!'.repeat(63)}@${'a'.repeat(61)}-.${'b'.repeat(61)}-.com`,
      `${'a'.repeat(64)}@${'a-'.repeat(30)}a.${'a'.repeat(62)}.${'1'.repeat(40)}`,
    ];
    // Linear-time guard: each input is 100 000 characters, so a pattern that backtracks
    // (quadratic or worse) would take minutes on it; a linear parser needs milliseconds. The bound
    // is generous enough for a noisy machine and still fails on any backtracking.
    for (const input of hostile) {
      const started = performance.now();
      expect(parseEmailAddress(input).valid).toBe(false);
      expect(performance.now() - started, `${input.slice(0, 20)}… (${input.length} chars)`).toBeLessThan(
        2000,
      );
    }
  });
});
