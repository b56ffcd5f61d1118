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
    expect(() => mapHeader(['email', '__proto__'])).toThrow('Column header not allowed: __proto__');
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
      error: 'Invalid email: ada at x',
    });
    expect(mapRow(columns, ['a@b', 'Ada', ''])).toMatchObject({ kind: 'failed' });
    expect(mapRow(columns, [' ', ''])).toEqual({ kind: 'blank' });
  });
});
