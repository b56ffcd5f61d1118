import { describe, expect, it } from 'vitest';
import { mapHeader, mapRow } from './import.js';

describe('mapHeader', () => {
  it('recognises CRM export headers whatever their case and separators', () => {
    const columns = mapHeader([
      '\uFEFFFirst Name',
      'LAST_NAME',
      'Email Address',
      'Phone Number',
      'Company Name',
      'Lead Source',
      '',
    ]);
    expect(columns).toEqual([
      { kind: 'field', field: 'firstName' },
      { kind: 'field', field: 'lastName' },
      { kind: 'field', field: 'email' },
      { kind: 'field', field: 'phone' },
      { kind: 'field', field: 'company' },
      { kind: 'custom', key: 'Lead Source' },
      { kind: 'ignored' },
    ]);
    expect(mapHeader(['e-mail', 'Account Name', 'Mobile'])).toEqual([
      { kind: 'field', field: 'email' },
      { kind: 'field', field: 'company' },
      { kind: 'field', field: 'phone' },
    ]);
  });

  it('refuses headers it cannot read unambiguously', () => {
    expect(() => mapHeader(['email', 'Notes', 'Notes'])).toThrow(
      'Column "Notes" appears twice in the header row',
    );
    expect(() => mapHeader(['First', 'firstname'])).toThrow('both hold firstName');
  });
});

describe('mapRow', () => {
  const columns = mapHeader(['email', 'firstName', 'Plan']);

  it('maps standard fields and keeps other columns as custom metadata', () => {
    expect(mapRow(columns, [' ada@x.test ', 'Ada', 'Pro'])).toEqual({
      kind: 'lead',
      fields: { email: 'ada@x.test', firstName: 'Ada' },
      custom: { Plan: 'Pro' },
    });
    expect(mapRow(columns, ['', 'Ada'])).toEqual({ kind: 'lead', fields: { firstName: 'Ada' }, custom: {} });
  });

  it('fails rows without a usable field or with a bad e-mail; skips blank rows', () => {
    expect(mapRow(columns, ['', '', 'Pro'])).toMatchObject({ kind: 'failed' });
    expect(mapRow(columns, ['ada at x', 'Ada', ''])).toEqual({
      kind: 'failed',
      error: 'email must be a single e-mail address, without spaces or control characters',
    });
    expect(mapRow(columns, ['ada@x', 'Ada', ''])).toEqual({ kind: 'failed', error: 'Invalid email: ada@x' });
    expect(mapRow(columns, ['a@b', 'Ada', ''])).toMatchObject({ kind: 'failed' });
    expect(mapRow(columns, [' ', ''])).toEqual({ kind: 'blank' });
  });

  it('makes custom column names safe as the webhook does, and refuses a row over its limits', () => {
    const custom = mapHeader(['email', '$number', 'a.b', '__proto__', 'constructor']);
    expect(mapRow(custom, ['ada@x.test', '5', 'x', 'p', 'c'])).toEqual({
      kind: 'lead',
      fields: { email: 'ada@x.test' },
      custom: { _number: '5', a_b: 'x' },
    });
    expect(mapRow(custom, ['ada@x.test', 'y'.repeat(33 * 1024), '', '', ''])).toEqual({
      kind: 'failed',
      error: 'Custom data is larger than 32 KiB',
    });
    const wide = mapHeader(['email', ...Array.from({ length: 101 }, (_, i) => `c${i}`)]);
    expect(mapRow(wide, ['ada@x.test', ...Array.from({ length: 101 }, () => 'v')])).toEqual({
      kind: 'failed',
      error: 'Custom data has more than 100 fields',
    });
    expect(mapRow(columns, ['', 'A'.repeat(101), ''])).toEqual({
      kind: 'failed',
      error: 'firstName must be at most 100 characters',
    });
    expect(mapRow(columns, ['', '\u{1F600}'.repeat(100), ''])).toMatchObject({ kind: 'lead' });
  });
});
