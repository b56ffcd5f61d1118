import { describe, expect, it } from 'vitest';
import { fitCustomData } from './custom.js';
import { PAYLOAD_LIMITS } from './limits.js';

describe('fitCustomData (custom data from outside a webhook payload, e.g. CSV columns)', () => {
  it('makes keys safe as the webhook does: a leading $, dots and NUL become _, prototype keys are dropped', () => {
    expect(
      fitCustomData([
        ['$number', '5'],
        ['a.b', 'x'],
        ['nul\0key', 'y'],
        ['__proto__', 'p'],
        ['constructor', 'c'],
        ['prototype', 'q'],
        ['a_b', 'z'],
      ]),
    ).toEqual({
      custom: { _number: '5', a_b: 'x', nul_key: 'y', a_b_2: 'z' },
      overFieldLimit: [],
      overSizeLimit: [],
    });
  });

  it('keeps the first 100 fields in order and names the ones left out', () => {
    const many = Array.from({ length: 130 }, (_, i) => [`k${i}`, 'v'] as const);
    const fitted = fitCustomData(many);
    expect(Object.keys(fitted.custom)).toEqual(
      many.slice(0, PAYLOAD_LIMITS.maxKeysPerObject).map(([k]) => k),
    );
    expect(fitted.overFieldLimit).toEqual(many.slice(PAYLOAD_LIMITS.maxKeysPerObject).map(([k]) => k));
    expect(fitted.overSizeLimit).toEqual([]);
  });

  it('leaves out a value that would pass 32 KiB whole (never cut) and still keeps the fields after it', () => {
    const fitted = fitCustomData([
      ['Title', 'CTO'],
      ['Notes', 'é'.repeat(8 * 1024)],
      ['More notes', 'x'.repeat(20 * 1024)],
      ['City', 'Zürich'],
    ]);
    expect(fitted.custom).toEqual({ Title: 'CTO', Notes: 'é'.repeat(8 * 1024), City: 'Zürich' });
    expect(fitted.overSizeLimit).toEqual(['More notes']);
  });

  it('fills the custom data up to exactly 32 KiB of JSON, not a byte more', () => {
    // {"a":"…"} is 8 bytes around the value; multi-byte characters and escapes count as written.
    const exact = 'ü'.repeat((PAYLOAD_LIMITS.maxCustomBytes - 8) / 2);
    const fits = fitCustomData([['a', exact]]);
    expect(Buffer.byteLength(JSON.stringify(fits.custom))).toBe(PAYLOAD_LIMITS.maxCustomBytes);
    expect(fitCustomData([['a', `${exact}"`]]).overSizeLimit).toEqual(['a']);
    const several = fitCustomData(
      Array.from({ length: 50 }, (_, i) => [`field ${i}`, '"\n'.repeat(300)] as const),
    );
    expect(Buffer.byteLength(JSON.stringify(several.custom))).toBeLessThanOrEqual(
      PAYLOAD_LIMITS.maxCustomBytes,
    );
    expect(several.overSizeLimit.length).toBeGreaterThan(0);
  });
});
