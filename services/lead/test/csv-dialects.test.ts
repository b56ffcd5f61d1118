import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiLead, getLead, type Harness, startHarness, waitFor } from './harness.js';

/** Real CRM and ad-platform exports (test/fixtures/csv), imported through the API. */

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness({ config: { DEFAULT_PHONE_REGION: 'US' } });
});
afterAll(async () => harness.close());

const FIXTURES = join(import.meta.dirname, 'fixtures', 'csv');
const fixture = (name: string) => readFile(join(FIXTURES, name));

const BOUNDARY = '----lead-dialect-test';

function multipart(file: Buffer, fields: Record<string, string> = {}) {
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="export.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  return {
    payload: Buffer.concat([
      Buffer.from(parts.join('')),
      Buffer.from(head),
      file,
      Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    ]),
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  };
}

interface Upload {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the answers are asserted field by field
  body: any;
}

async function upload(
  file: Buffer | string,
  options: { query?: Record<string, string>; fields?: Record<string, string>; raw?: boolean } = {},
): Promise<Upload> {
  const bytes = typeof file === 'string' ? Buffer.from(file) : file;
  const request = options.raw
    ? { payload: bytes, headers: { 'content-type': 'text/csv' } }
    : multipart(bytes, options.fields);
  const url = `/api/leads/import${options.query ? `?${new URLSearchParams(options.query)}` : ''}`;
  const response = await harness.app.inject({
    method: 'POST',
    url,
    headers: { ...(await harness.auth({ method: 'POST', url })), ...request.headers },
    payload: request.payload,
  });
  return { status: response.statusCode, body: response.json() };
}

/** The leads of an import, in row order, once every accepted row is captured and announced. */
async function leadsOf(body: { importId: string; accepted: number }): Promise<ApiLead[]> {
  const stored = await waitFor(`the ${body.accepted} leads of import ${body.importId}`, async () => {
    const found = await harness.store
      .collection('lead_leads')
      .find(
        { 'capture.importId': body.importId, 'capture.deduplicated': true },
        { sort: { 'capture.importRow': 1 } },
      );
    return found.length === body.accepted && found;
  });
  return Promise.all(stored.map((lead) => getLead(harness, lead._id as string)));
}

const standard = (lead: ApiLead) => [lead.firstName, lead.lastName, lead.email, lead.phone, lead.company];

describe('exports of CRMs and ad platforms', () => {
  it('German Excel: Windows-1252, semicolons, German headers', async () => {
    const { status, body } = await upload(await fixture('german-excel.csv'));
    expect(status).toBe(200);
    expect(body).toMatchObject({
      rows: 3,
      accepted: 3,
      failed: 0,
      skipped: 0,
      dialect: { encoding: 'windows-1252', bom: false, delimiter: ';' },
    });
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['Jürgen', 'Müller', 'juergen.mueller@beispiel.test', '+4930901820', 'Müller & Söhne GmbH'],
      ['Zoë', 'Weiß', 'zoe.weiss@beispiel.test', '+49891234567', 'Weiß; Partner KG'],
      ['François', 'Dubois', 'f.dubois@exemple.test', null, 'Société Générale Test'],
    ]);
    expect(leads[0]!.customFields).toEqual({
      Anrede: 'Herr',
      Straße: 'Hauptstraße 5',
      PLZ: '10115',
      Ort: 'Berlin',
      Umsatz: '1.250,00 €',
    });
  });

  it('Meta lead export: UTF-16 LE with BOM, tab separated, full names and p: phones', async () => {
    const { status, body } = await upload(await fixture('meta-leads.csv'));
    expect(status).toBe(200);
    expect(body).toMatchObject({
      rows: 3,
      accepted: 3,
      failed: 0,
      dialect: { encoding: 'utf-16le', bom: true, delimiter: '\t' },
    });
    expect(body.columns.filter((column: { mapsTo: string }) => column.mapsTo !== 'custom')).toEqual([
      { header: 'full_name', mapsTo: 'fullName', mapped: false },
      { header: 'phone_number', mapsTo: 'phone', mapped: false },
      { header: 'email', mapsTo: 'email', mapped: false },
      { header: 'company_name', mapsTo: 'company', mapped: false },
    ]);
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['Akshay', 'Sinha', 'akshay@blupace.test', '+447700900123', 'Blupace Tech'],
      // The default name split (first-word): the first name is one word, the rest the last name.
      ['María', 'José García López', 'mjgarcia@correo.test', '+34612345678', null],
      ['Anna', 'Van der Berg', 'anna@vdberg.test', '+31612345678', 'Van der Berg BV'],
    ]);
    expect(leads[0]!.customFields).toMatchObject({
      id: 'l:4280180252203503',
      campaign_name: 'Leadgen UK',
      platform: 'ig',
      job_title: 'CTO',
      city: 'London',
    });
  });

  it('Salesforce report: every row imported, the footer skipped and reported, no footer lead', async () => {
    const { status, body } = await upload(await fixture('salesforce-leads-report.csv'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ rows: 3, accepted: 3, imported: 3, failed: 0, errors: [] });
    expect(body.skipped).toBe(5);
    expect(body.skippedRows).toEqual([
      { row: 5, reason: 'blank row' },
      { row: 6, reason: 'report line: Grand Totals (3 records)' },
      { row: 7, reason: 'blank row' },
      { row: 8, reason: 'report line: Confidential Information - Do Not Distribute' },
      { row: 9, reason: 'report line: Copyright (c) 2000-2026 salesforce.com, inc. All rights reserved.' },
    ]);
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['Sarah', 'Connor', 'sarah.connor@cyberdyne.test', '+14155550142', 'Cyberdyne Systems'],
      ['John', "O'Brien", 'john.obrien@acme.test', '+12125550110', 'Acme, Inc.'],
      ['Mei', 'Tanaka', 'mei.tanaka@umbrella.test', '+16465550123', 'Umbrella Corp'],
    ]);
    expect(leads[0]!.customFields).toEqual({
      Title: 'VP Operations',
      Mobile: '(415) 555-0199',
      'Lead Source': 'Web',
      'Lead Status': 'Open - Not Contacted',
    });
    const footer = await harness.store
      .collection('lead_leads')
      .countDocuments({ 'capture.importId': body.importId, 'capture.importRow': { $gte: 4 } });
    expect(footer).toBe(0);
  });

  it('Pipedrive people export: work before home e-mail, names split or given', async () => {
    const { status, body } = await upload(await fixture('pipedrive-people.csv'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ rows: 3, accepted: 3, failed: 0 });
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['Ada', 'Lovelace', 'ada@analytical.test', '+442079460001', 'Analytical Engines Ltd'],
      ['Charles', 'Babbage', 'charles@home.test', '+442079460002', 'Difference Engines Ltd'],
      ['Juan', 'de la Cruz', null, '+525512345678', null],
    ]);
    expect(leads[0]!.customFields).toMatchObject({
      'Person - Phone - Mobile': '+44 7700 900001',
      'Person - Label': 'Hot lead',
      'Person - ID': '101',
    });
    expect(leads[1]!.customFields).toMatchObject({ 'Person - Email - Other': 'charles@other.test' });
  });

  it('HubSpot contacts export: Company Name before Associated Company', async () => {
    const { status, body } = await upload(await fixture('hubspot-contacts.csv'));
    expect(status).toBe(200);
    expect(body).toMatchObject({
      rows: 3,
      accepted: 3,
      failed: 0,
      dialect: { encoding: 'utf-8', bom: true },
    });
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['Brian', 'Halligan', 'bh@hubspot-example.test', '+16175550101', 'HubSpot Example'],
      ['Linus', 'Torvalds', 'linus@kernel.test', '+15035550102', 'Linux Foundation'],
      [null, null, 'info@nameless.test', null, null],
    ]);
    expect(leads[0]!.customFields).toMatchObject({
      'Record ID': '51',
      'Associated Company': 'HubSpot Example Inc',
      'Lifecycle Stage': 'Lead',
    });
  });

  it('Mailchimp audience export', async () => {
    const { status, body } = await upload(await fixture('mailchimp-audience.csv'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ rows: 2, accepted: 2, failed: 0 });
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['Grace', 'Hopper', 'grace@navy.test', '+17035550147', 'US Navy'],
      ['Alan', 'Turing', 'alan@bletchley.test', null, null],
    ]);
    expect(leads[0]!.customFields).toMatchObject({ MEMBER_RATING: '4', TAGS: '"Webinar","VIP"', CC: 'US' });
  });

  it('Zoho CRM leads export: the secondary e-mail when the e-mail is empty', async () => {
    const { status, body } = await upload(await fixture('zoho-leads.csv'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ rows: 3, accepted: 3, failed: 0 });
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['Kris', 'Marrier', 'krismarrier@noemail.test', '+15555555555', 'King (Sample)'],
      ['Capla', 'Paprocki', 'capla.paprocki@home.test', '+19075550100', 'Feltz Printing Service'],
      ['Simon', 'Morasca', 'simon@morasca.test', null, 'Chapman Ross & Co'],
    ]);
    expect(leads[0]!.customFields).toMatchObject({
      'Record Id': 'zcrm_4876876000000123001',
      Mobile: '555-555-5556',
    });
  });

  it('LinkedIn lead gen form export', async () => {
    const { status, body } = await upload(await fixture('linkedin-leads.csv'), { raw: true });
    expect(status).toBe(200);
    expect(body).toMatchObject({ rows: 2, accepted: 2, failed: 0 });
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['Reid', 'Hoffman', 'reid@greylock.test', '+16505550170', 'Greylock Test'],
      ['Chloé', 'Lefèvre', 'chloe.lefevre@entreprise.test', null, 'Entreprise Test SAS'],
    ]);
    expect(leads[1]!.customFields).toMatchObject({ 'Job Title': 'Directrice marketing', Country: 'France' });
  });
});

describe('dry run and explicit parameters', () => {
  const custom =
    'Kontakt Mail;Wer;Firma Name;Notiz\nada@x.test;Lovelace, Ada;Analytical;first\n;;;\nbad-mail;Bob;;\n';

  it('answers the dialect, the mapping and the first rows as they would be imported, importing nothing', async () => {
    const imports = await harness.store.collection('lead_imports').countDocuments({});
    const { status, body } = await upload(custom, {
      query: {
        dryRun: 'true',
        mapping: JSON.stringify({ 'Kontakt Mail': 'email', wer: 'fullName', 'Firma Name': 'company' }),
      },
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      dryRun: true,
      dialect: { encoding: 'utf-8', bom: false, delimiter: ';' },
      columns: [
        { header: 'Kontakt Mail', mapsTo: 'email', mapped: true },
        { header: 'Wer', mapsTo: 'fullName', mapped: true },
        { header: 'Firma Name', mapsTo: 'company', mapped: true },
        { header: 'Notiz', mapsTo: 'custom', mapped: false },
      ],
      rows: 2,
      accepted: 1,
      duplicates: 0,
      failed: 1,
      errors: [{ row: 4, error: 'Invalid email: bad-mail', value: 'bad-mail, Bob' }],
      skipped: 1,
      skippedRows: [{ row: 3, reason: 'blank row' }],
      trimmed: 0,
      trimmedRows: [],
      preview: [
        {
          row: 2,
          fields: { email: 'ada@x.test', firstName: 'Ada', lastName: 'Lovelace', company: 'Analytical' },
          custom: { Notiz: 'first' },
        },
      ],
    });
    expect(await harness.store.collection('lead_imports').countDocuments({})).toBe(imports);
    expect(await harness.store.collection('lead_leads').countDocuments({ email: 'ada@x.test' })).toBe(0);
  });

  it('takes the parameters as multipart form fields too, and then imports with them', async () => {
    const { status, body } = await upload(custom, {
      fields: {
        mapping: JSON.stringify({ 'Kontakt Mail': 'email', Wer: 'fullName', Notiz: 'ignore' }),
        delimiter: ';',
      },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ accepted: 1, failed: 1, skipped: 1 });
    const [lead] = await leadsOf(body);
    expect(standard(lead!)).toEqual(['Ada', 'Lovelace', 'ada@x.test', null, null]);
    expect(lead!.customFields).toEqual({ 'Firma Name': 'Analytical' });
  });

  it('reads the file with the encoding and delimiter the caller names', async () => {
    const latin1 = Buffer.from('email|name\nzoe@x.test|Zo\u00eb\n', 'latin1');
    const { body } = await upload(latin1, {
      query: { dryRun: 'true', encoding: 'iso-8859-1', delimiter: '|' },
    });
    expect(body).toMatchObject({
      dialect: { encoding: 'iso-8859-1', delimiter: '|' },
      preview: [{ row: 2, fields: { email: 'zoe@x.test', firstName: 'Zoë' } }],
    });
  });

  it('refuses bad parameters with a 400 naming them', async () => {
    const file = 'email\na@x.test\n';
    const cases: [Parameters<typeof upload>[1], string][] = [
      [
        { query: { mapping: '[1]' } },
        'mapping must be a JSON object such as {"Contact Mail":"email","Who":"fullName"}',
      ],
      [
        { query: { mapping: '{"email":"telephone"}' } },
        'mapping of "email" must be one of: email, firstName, lastName, phone, company, fullName, custom, ignore',
      ],
      [
        { query: { mapping: '{"Mail":"email"}' } },
        'The mapping names a column the header row does not have: "Mail"',
      ],
      [{ query: { encoding: 'klingon-8' } }, 'Unknown encoding: klingon-8'],
      [
        { query: { delimiter: '""' } },
        'delimiter must be one character (not a quote or a line break), or "tab"',
      ],
      [{ query: { dryRun: 'maybe' } }, 'dryRun must be a boolean'],
      [
        { fields: { dryrun: 'true' } },
        'Unknown form field "dryrun"; send "file" and optionally dryRun, mapping, delimiter, encoding, enrol',
      ],
      [
        { fields: { dryRun: 'true' }, query: { dryRun: 'true' } },
        'Give dryRun once: as a query parameter or as a form field',
      ],
    ];
    for (const [options, error] of cases) {
      const { status, body } = await upload(file, options);
      expect({ status, body }, error).toEqual({ status: 400, body: { error } });
    }
    // A misspelt parameter must not turn a dry run into an import.
    const typo = await upload(file, { query: { dryrun: 'true' } });
    expect(typo).toEqual({ status: 400, body: { error: 'dryrun is not an allowed field' } });
  });
});

describe('hostile files stay a 400', () => {
  it('binary files, workbooks, huge headers, endless lines and unbalanced quotes', async () => {
    const random = Buffer.alloc(8192);
    for (let index = 0; index < random.length; index++) random[index] = (index * 7919 + 13) % 256;
    const cases: [Buffer | string, string | RegExp][] = [
      [random, 'The file is not text; upload the leads as a CSV file'],
      [
        Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), random]),
        'The file is an Excel workbook (.xlsx) or another zip archive, not CSV; save it as CSV and upload that',
      ],
      [
        `${Array.from({ length: 5000 }, (_, i) => `column${i}`).join(',')}\n`,
        'The header row has 5000 columns; at most 1000 are read',
      ],
      [`email,${'x'.repeat(2_000_000)}\n`, /^The row starting on line 1 is longer than 1048576 characters/],
      [
        `email,name\n"a@x.test,Ada\n${'b@x.test,Bob\n'.repeat(100_000)}`,
        /^The row starting on line 2 is longer than/,
      ],
      ['email,name\na@x.test,"Ada\n', 'The file is not valid CSV: a quote (") is opened and never closed'],
      [
        'email,name\n"a@x.test"x,Ada\n',
        'The file is not valid CSV: a quoted field is followed by text before the next delimiter',
      ],
      ['\uFEFF', 'The file is empty; expected a header row and data rows'],
    ];
    for (const [file, error] of cases) {
      const { status, body } = await upload(typeof file === 'string' ? Buffer.from(file) : file);
      expect(status, String(error)).toBe(400);
      expect(body.error, String(error)).toMatch(error);
    }
    // Nothing of any of them was recorded as an import.
    expect(await harness.store.collection('lead_imports').countDocuments({ rows: { $gt: 100 } })).toBe(0);
  });
});

describe('spreadsheets as people save them', () => {
  it('Excel "CSV UTF-8": a title above the header, repeated and blank header cells, rows padded with empty cells', async () => {
    // Excel writes every cell of the sheet's used range: the title row and the blank row carry the
    // commas of the columns below them, and a row whose cells were once touched further right
    // carries empty cells past the header.
    const sheet = [
      'Leads - Salon Paris 2026,,,,,,',
      ',,,,,,',
      'First Name,Last Name,Email,Phone,Notes,Notes,',
      'Ada,Lovelace, ada@analytical.test ,+44 20 7946 0001,"Met at booth 12, ""very"" keen","Call back\r\nin May",',
      'Émile,Zola,emile@zola.test,,,,',
      ',,,,,,',
      'Bad,Mail,not-an-email,,,,',
      'Bob,Smith,bob@smith.test,(415) 555-0142,,,,,',
    ].join('\r\n');
    const { status, body } = await upload(Buffer.from(`\uFEFF${sheet}\r\n`));
    expect(status).toBe(200);
    expect(body).toMatchObject({
      rows: 4,
      accepted: 3,
      failed: 1,
      errors: [{ row: 7, error: 'Invalid email: not-an-email', value: 'Bad, Mail, not-an-email' }],
      skipped: 1,
      skippedRows: [{ row: 6, reason: 'blank row' }],
      dialect: { encoding: 'utf-8', bom: true, delimiter: ',' },
    });
    expect(body.rows).toBe(body.accepted + body.failed);
    expect(body.columns.map((column: { mapsTo: string }) => column.mapsTo)).toEqual([
      'firstName',
      'lastName',
      'email',
      'phone',
      'custom',
      'custom',
      'ignored',
    ]);
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['Ada', 'Lovelace', 'ada@analytical.test', '+442079460001', null],
      ['Émile', 'Zola', 'emile@zola.test', null, null],
      ['Bob', 'Smith', 'bob@smith.test', '+14155550142', null],
    ]);
    expect(leads[0]!.customFields).toEqual({
      Notes: 'Met at booth 12, "very" keen',
      'Notes (2)': 'Call back\r\nin May',
    });
    const progress = await harness.app.inject({
      method: 'GET',
      url: body.statusUrl,
      headers: await harness.auth({ method: 'GET', url: body.statusUrl }),
    });
    expect(progress.json()).toMatchObject({ rows: 4, accepted: 3, failed: 1, skipped: 1 });
  });

  it('Excel on a French locale: Windows-1252, semicolons, decimal commas, French headers', async () => {
    const sheet =
      "Prénom;Nom;Adresse e-mail;Téléphone;Société;Chiffre d'affaires;Date de création\r\n" +
      'François;Dubois; f.dubois@exemple.test ;+33 1 42 68 53 00;Société Générale;1 250,50;28/11/2026\r\n' +
      'Hélène;Lefèvre;helene@exemple.test;+33 6 12 34 56 78;"Crédit Agricole; Île-de-France";980,00;27/11/2026\r\n';
    const { status, body } = await upload(iconv.encode(sheet, 'windows-1252'));
    expect(status).toBe(200);
    expect(body).toMatchObject({
      rows: 2,
      accepted: 2,
      failed: 0,
      dialect: { encoding: 'windows-1252', bom: false, delimiter: ';' },
    });
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['François', 'Dubois', 'f.dubois@exemple.test', '+33142685300', 'Société Générale'],
      ['Hélène', 'Lefèvre', 'helene@exemple.test', '+33612345678', 'Crédit Agricole; Île-de-France'],
    ]);
    expect(leads[0]!.customFields).toEqual({
      "Chiffre d'affaires": '1 250,50',
      'Date de création': '28/11/2026',
    });
  });

  it('Excel for Mac "Comma Separated Values": Mac Roman, lines ended by a lone CR', async () => {
    const sheet =
      'First Name,Last Name,Email,Company\rJosé,Núñez,jose@nunez.test,Café Olé\rZoë,Weiß,zoe@weiss.test,\r';
    const { status, body } = await upload(iconv.encode(sheet, 'macintosh'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ rows: 2, accepted: 2, dialect: { encoding: 'macintosh', delimiter: ',' } });
    const leads = await leadsOf(body);
    expect(leads.map(standard)).toEqual([
      ['José', 'Núñez', 'jose@nunez.test', null, 'Café Olé'],
      ['Zoë', 'Weiß', 'zoe@weiss.test', null, null],
    ]);
  });

  it('Google Contacts export: the first e-mail and phone values, the others kept', async () => {
    const sheet =
      'First Name,Middle Name,Last Name,Nickname,E-mail 1 - Label,E-mail 1 - Value,E-mail 2 - Label,E-mail 2 - Value,Phone 1 - Label,Phone 1 - Value,Organization Name,Organization Title,Labels\n' +
      'Grace,Brewster,Hopper,Amazing Grace,* Work,grace@navy.test,Home,grace@home.test,Mobile,+1 703 555 0147,US Navy,Rear Admiral,* myContacts\n';
    const { status, body } = await upload(sheet);
    expect(status).toBe(200);
    expect(body).toMatchObject({ rows: 1, accepted: 1, failed: 0 });
    const [lead] = await leadsOf(body);
    expect(standard(lead!)).toEqual(['Grace', 'Hopper', 'grace@navy.test', '+17035550147', 'US Navy']);
    expect(lead!.customFields).toMatchObject({
      'E-mail 2 - Value': 'grace@home.test',
      'Middle Name': 'Brewster',
    });
  });
});
