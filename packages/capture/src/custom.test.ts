import { describe, expect, it } from 'vitest';
import { safeCustomData } from './custom.js';
import { PAYLOAD_LIMITS } from './limits.js';

describe('safeCustomData (custom data from outside a webhook payload, e.g. CSV columns)', () => {
  it('makes keys safe as the webhook does: a leading $, dots and NUL become _, prototype keys are dropped', () => {
    expect(
      safeCustomData([
        ['$number', '5'],
        ['a.b', 'x'],
        ['nul\0key', 'y'],
        ['__proto__', 'p'],
        ['constructor', 'c'],
        ['prototype', 'q'],
        ['a_b', 'z'],
      ]),
    ).toEqual({ ok: true, custom: { _number: '5', a_b: 'x', nul_key: 'y', a_b_2: 'z' } });
  });

  it('refuses, with the webhook message, more fields or more bytes than the limits', () => {
    const many = Array.from(
      { length: PAYLOAD_LIMITS.maxKeysPerObject + 1 },
      (_, i) => [`k${i}`, 'v'] as const,
    );
    expect(safeCustomData(many)).toEqual({ ok: false, error: 'Custom data has more than 100 fields' });
    expect(safeCustomData([['big', 'x'.repeat(PAYLOAD_LIMITS.maxCustomBytes)]])).toEqual({
      ok: false,
      error: 'Custom data is larger than 32 KiB',
    });
  });
});
