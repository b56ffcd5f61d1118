import { describe, expect, it } from 'vitest';
import { mapHeader, mapRow, viewOfColumns } from './columns.js';

const mapsTo = (cells: string[], mapping?: Record<string, never> | Parameters<typeof mapHeader>[1]) =>
  viewOfColumns(mapHeader(cells, mapping)).map((column) => column.mapsTo);

describe('mapHeader', () => {
  it('recognises CRM export headers whatever their case, accents and separators', () => {
    expect(
      mapsTo([
        '\uFEFFFirst Name',
        'LAST_NAME',
        'Email Address',
        'Phone Number',
        'Company Name',
        'Lead Source',
        '',
      ]),
    ).toEqual(['firstName', 'lastName', 'email', 'phone', 'company', 'custom', 'ignored']);
    expect(mapsTo(['e-mail', 'Account Name', 'Mobile'])).toEqual(['email', 'company', 'phone']);
    expect(mapsTo(['Vorname', 'Nachname', 'E-Mail', 'Telefon', 'Firma'])).toEqual([
      'firstName',
      'lastName',
      'email',
      'phone',
      'company',
    ]);
    expect(mapsTo(['full_name', 'phone_number', 'company_name', 'is_organic'])).toEqual([
      'fullName',
      'phone',
      'company',
      'custom',
    ]);
    expect(mapsTo(['Company / Account', 'Associated Company', 'Person - Email - Work'])).toEqual([
      'company',
      'company',
      'email',
    ]);
  });

  it('refuses headers it cannot read unambiguously', () => {
    expect(() => mapHeader(['First', 'firstname'])).toThrow('both hold firstName');
    expect(() => mapHeader(['colour', 'size'])).toThrow('names none of the recognised columns');
    expect(() => mapHeader(Array.from({ length: 1001 }, (_, i) => `c${i}`))).toThrow(
      'The header row has 1001 columns; at most 1000 are read',
    );
  });

  it('takes an explicit mapping before the names it recognises', () => {
    const columns = mapHeader(['Contact Mail', 'Email', 'Who', 'Junk', 'Phone'], {
      'Contact Mail': 'email',
      who: 'fullName',
      Junk: 'ignore',
      Phone: 'custom',
    });
    expect(viewOfColumns(columns)).toEqual([
      { header: 'Contact Mail', mapsTo: 'email', mapped: true },
      // The mapping names the e-mail column: the one recognised by its name is kept as custom data.
      { header: 'Email', mapsTo: 'custom', mapped: false },
      { header: 'Who', mapsTo: 'fullName', mapped: true },
      { header: 'Junk', mapsTo: 'ignored', mapped: false },
      { header: 'Phone', mapsTo: 'custom', mapped: false },
    ]);
    expect(mapRow(columns, ['ada@x.test', 'old@x.test', 'Ada Lovelace', 'x', '555'])).toEqual({
      kind: 'lead',
      fields: { email: 'ada@x.test', firstName: 'Ada', lastName: 'Lovelace' },
      custom: { Email: 'old@x.test', Phone: '555' },
    });
    expect(() => mapHeader(['a', 'b'], { a: 'email', b: 'email' })).toThrow('maps two columns to email');
    expect(() => mapHeader(['a', 'b'], { a: 'email', c: 'phone' })).toThrow(
      'The mapping names a column the header row does not have: "c"',
    );
    // Only custom columns: nothing to import.
    expect(() => mapHeader(['a'], { a: 'custom' })).toThrow('names none of the recognised columns');
  });
});

describe('headers as spreadsheets write them', () => {
  it('keeps a repeated column name under a numbered name, as the webhook numbers a repeated field', () => {
    const columns = mapHeader(['Email', 'Notes', 'Notes (2)', 'Notes', 'Notes']);
    expect(mapRow(columns, ['ada@x.test', 'first', 'second', 'third', 'fourth'])).toEqual({
      kind: 'lead',
      fields: { email: 'ada@x.test' },
      custom: { Notes: 'first', 'Notes (2)': 'second', 'Notes (3)': 'third', 'Notes (4)': 'fourth' },
    });
    expect(viewOfColumns(columns).map((column) => column.header)).toEqual([
      'Email',
      'Notes',
      'Notes (2)',
      'Notes',
      'Notes',
    ]);
  });

  it('recognises the headers of French, Spanish, Italian, Dutch and Portuguese sheets and Google Contacts', () => {
    expect(mapsTo(['Prénom', 'Nom', 'Courriel', 'Téléphone', 'Portable', 'Société'])).toEqual([
      'firstName',
      'lastName',
      'email',
      'phone',
      'phone',
      'company',
    ]);
    expect(mapsTo(['Nombre', 'Apellidos', 'Correo electrónico', 'Teléfono', 'Móvil', 'Empresa'])).toEqual([
      'firstName',
      'lastName',
      'email',
      'phone',
      'phone',
      'company',
    ]);
    expect(mapsTo(['Nome', 'Cognome', 'Indirizzo email', 'Telefono', 'Cellulare', 'Azienda'])).toEqual([
      'firstName',
      'lastName',
      'email',
      'phone',
      'phone',
      'company',
    ]);
    expect(mapsTo(['Voornaam', 'Achternaam', 'E-mailadres', 'Telefoonnummer', 'Bedrijf'])).toEqual([
      'firstName',
      'lastName',
      'email',
      'phone',
      'company',
    ]);
    expect(mapsTo(['Nome', 'Sobrenome', 'E-mail', 'Celular', 'Empresa'])).toEqual([
      'firstName',
      'lastName',
      'email',
      'phone',
      'company',
    ]);
    expect(
      mapsTo([
        'First Name',
        'Last Name',
        'E-mail 1 - Label',
        'E-mail 1 - Value',
        'E-mail 2 - Value',
        'Phone 1 - Value',
        'Organization Name',
      ]),
    ).toEqual(['firstName', 'lastName', 'custom', 'email', 'custom', 'phone', 'company']);
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

  it('reads a row that ends in empty cells past the header; a value past the header fails the row', () => {
    // Excel writes the cells of its used range: "a@x.test,Ada,," under a two-column header.
    expect(mapRow(columns, ['ada@x.test', 'Ada', 'Pro', '', ' '])).toEqual({
      kind: 'lead',
      fields: { email: 'ada@x.test', firstName: 'Ada' },
      custom: { Plan: 'Pro' },
    });
    expect(mapRow(columns, ['ada@x.test', 'Ada', 'Pro', '', 'oops', ''])).toEqual({
      kind: 'failed',
      error: 'Row has 5 cells but the header has 3',
    });
  });

  it('skips report lines alone in their row, and only those', () => {
    const report = mapHeader(['First Name', 'Last Name', 'Email']);
    for (const line of [
      'Grand Totals (3 records)',
      'Total',
      'Subtotal (12 records)',
      'Confidential Information - Do Not Distribute',
      'Copyright (c) 2000-2026 salesforce.com, inc. All rights reserved.',
      '© 2026 Example Corp. All rights reserved.',
    ]) {
      expect(mapRow(report, [line]), line).toEqual({ kind: 'report', line });
      expect(mapRow(report, ['', '', line]), line).toEqual({ kind: 'report', line });
    }
    // A person named Total with an e-mail is a lead.
    expect(mapRow(report, ['Total', 'Smith', 't@x.test'])).toMatchObject({ kind: 'lead' });
    expect(mapRow(report, ['Grand Totals (3 records)', '', 'g@x.test'])).toMatchObject({ kind: 'lead' });
  });

  it('takes the preferred of several columns of one field and keeps the others', () => {
    const pipedrive = mapHeader([
      'Person - Name',
      'Person - Email - Work',
      'Person - Email - Home',
      'Person - Email - Other',
      'Person - Phone - Work',
      'Person - Phone - Mobile',
    ]);
    expect(
      mapRow(pipedrive, ['Ada Lovelace', '', 'ada@home.test', 'ada@other.test', '', '+44 7700 900123']),
    ).toEqual({
      kind: 'lead',
      fields: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@home.test', phone: '+44 7700 900123' },
      custom: { 'Person - Email - Other': 'ada@other.test' },
    });
    const salesforce = mapHeader(['Phone', 'Mobile', 'Company / Account']);
    expect(mapRow(salesforce, ['+1 415 555 0101', '+1 415 555 0199', 'Acme'])).toEqual({
      kind: 'lead',
      fields: { phone: '+1 415 555 0101', company: 'Acme' },
      custom: { Mobile: '+1 415 555 0199' },
    });
  });

  it('splits a full name only when neither first nor last name has a value', () => {
    const both = mapHeader(['Full Name', 'First Name', 'Last Name']);
    expect(mapRow(both, ['Lovelace, Ada', '', ''])).toMatchObject({
      fields: { firstName: 'Ada', lastName: 'Lovelace' },
    });
    expect(mapRow(both, ['Ada King', 'Ada', 'Lovelace'])).toMatchObject({
      fields: { firstName: 'Ada', lastName: 'Lovelace' },
      custom: {},
    });
    expect(mapRow(both, ['Cher', '', ''])).toMatchObject({ fields: { firstName: 'Cher' } });
  });

  it("drops Meta's p: type prefix from a phone", () => {
    const meta = mapHeader(['full_name', 'phone_number', 'id']);
    expect(mapRow(meta, ['Akshay Sinha', 'p:+447700900123', 'l:4280180252203503'])).toEqual({
      kind: 'lead',
      fields: { firstName: 'Akshay', lastName: 'Sinha', phone: '+447700900123' },
      custom: { id: 'l:4280180252203503' },
    });
  });

  it('makes custom column names safe as the webhook does, and keeps what fits of a row over its limits', () => {
    const custom = mapHeader(['email', '$number', 'a.b', '__proto__', 'constructor']);
    expect(mapRow(custom, ['ada@x.test', '5', 'x', 'p', 'c'])).toEqual({
      kind: 'lead',
      fields: { email: 'ada@x.test' },
      custom: { _number: '5', a_b: 'x' },
    });
    expect(mapRow(custom, ['ada@x.test', 'y'.repeat(33 * 1024), 'x', '', ''])).toEqual({
      kind: 'lead',
      fields: { email: 'ada@x.test' },
      custom: { a_b: 'x' },
      trimmed:
        '1 custom column not kept: a lead keeps at most 32 KiB of custom data (first dropped: $number)',
    });
    const wide = mapHeader(['email', ...Array.from({ length: 101 }, (_, i) => `c${i}`)]);
    expect(mapRow(wide, ['ada@x.test', ...Array.from({ length: 101 }, () => 'v')])).toEqual({
      kind: 'lead',
      fields: { email: 'ada@x.test' },
      custom: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`c${i}`, 'v'])),
      trimmed: '1 custom column not kept: a lead keeps at most 100 custom fields (first dropped: c100)',
    });
    // Both limits at once: each is said, the size first (it is met first in column order here).
    const wider = mapHeader(['email', ...Array.from({ length: 102 }, (_, i) => `c${i}`)]);
    const both = mapRow(wider, [
      'ada@x.test',
      'z'.repeat(40 * 1024),
      ...Array.from({ length: 101 }, () => 'v'),
    ]);
    expect(both).toMatchObject({
      kind: 'lead',
      trimmed:
        '1 custom column not kept: a lead keeps at most 32 KiB of custom data (first dropped: c0); ' +
        '1 custom column not kept: a lead keeps at most 100 custom fields (first dropped: c101)',
    });
    expect(mapRow(columns, ['', 'A'.repeat(101), ''])).toEqual({
      kind: 'failed',
      error: 'firstName must be at most 100 characters',
    });
    expect(mapRow(columns, ['', '\u{1F600}'.repeat(100), ''])).toMatchObject({ kind: 'lead' });
  });
});
