import { describe, expect, it } from 'vitest';
import { api, harness, useLeadApi } from './api-fixtures.js';
import { importCsv, importDone, importedLeads } from './csv-fixtures.js';

useLeadApi();

/**
 * A HubSpot contacts export with "all properties" (knowledge.hubspot.com, "Export your records"): the
 * standard columns, HubSpot's default contact properties and a portal's own, 150 columns in all.
 * Only First Name, Last Name, Email, Phone Number and Company Name are standard fields; the other
 * 145 are custom columns, more than the 100 custom fields a lead keeps.
 */
const HUBSPOT_PROPERTIES = [
  'Record ID',
  'Contact owner',
  'Lead Status',
  'Lifecycle Stage',
  'Create Date',
  'Last Activity Date',
  'Last Modified Date',
  'Job Title',
  'Street Address',
  'City',
  'State/Region',
  'Postal Code',
  'Country/Region',
  'Time Zone',
  'Website URL',
  'Industry',
  'Annual Revenue',
  'Number of Employees',
  'Fax Number',
  'Marital Status',
  'Date of birth',
  'Degree',
  'Field of study',
  'School',
  'Seniority',
  'Gender',
  'Preferred language',
  'Original Source',
  'Original Source Drill-Down 1',
  'Original Source Drill-Down 2',
  'Latest Source',
  'Latest Source Drill-Down 1',
  'Latest Source Drill-Down 2',
  'Latest Source Timestamp',
  'First Conversion',
  'First Conversion Date',
  'Recent Conversion',
  'Recent Conversion Date',
  'Number of Form Submissions',
  'Number of Pageviews',
  'Number of Sessions',
  'First Page Seen',
  'Last Page Seen',
  'First Referring Site',
  'Last Referring Site',
  'Time First Seen',
  'Time Last Seen',
  'Average Pageviews',
  'Marketing emails delivered',
  'Marketing emails opened',
  'Marketing emails clicked',
  'Marketing emails bounced',
  'Last marketing email name',
  'Last marketing email send date',
  'Last marketing email open date',
  'Last marketing email click date',
  'Unsubscribed from all email',
  'Email Domain',
  'Email hard bounce reason',
  'Sends Since Last Engagement',
  'Currently in Sequence',
  'Last sequence enrolled',
  'Last sequence enrolled date',
  'Number of sequences enrolled',
  'Last Contacted',
  'Last Engagement Date',
  'Next Activity Date',
  'Number of Sales Activities',
  'Number of times contacted',
  'Lead response time',
  'First Deal Created Date',
  'Number of Associated Deals',
  'Recent Deal Amount',
  'Recent Deal Close Date',
  'Total Revenue',
  'Became a Lead Date',
  'Became a Marketing Qualified Lead Date',
  'Became a Sales Qualified Lead Date',
  'Became an Opportunity Date',
  'Became a Customer Date',
  'Became a Subscriber Date',
  'Became an Evangelist Date',
  'Became an Other Lifecycle Date',
  'HubSpot Score',
  'Buying Role',
  'Persona',
  'Associated Company ID',
  'Primary Associated Company ID',
  'IP City',
  'IP Country',
  'IP State/Region',
  'IP Country Code',
  'Twitter Username',
  'LinkedIn Bio',
  'Facebook click id',
  'Google ad click id',
  'Legal basis for processing contact data',
  'Message',
  'Owner Assigned Date',
  'HubSpot Team',
  'Contact Unworked',
  'Member of lists',
  'Event Revenue',
  'Recent Sales Email Replied Date',
  'Recent Sales Email Opened Date',
  'Recent Sales Email Clicked Date',
  'Last Meeting Booked',
  'Last Meeting Booked Campaign',
  'Last Meeting Booked Medium',
  'Last Meeting Booked Source',
  'Became a Marketing Contact Date',
  'Marketing contact status',
  'Object create date/time',
  'Record source',
  'Record source detail 1',
  'Trade show visited',
  'Webinar attended',
  'Product interest',
  'Budget',
  'Purchase timeframe',
  'Current CRM',
  'Competitor evaluated',
  'Partner referral',
  'Newsletter topics',
  'Region (sales)',
  'Territory',
  'Account tier',
  'Renewal month',
  'NPS score',
  'Support plan',
  'Onboarding status',
  'Customer since',
  'Contract value',
  'Payment terms',
  'Billing contact',
  'Referral code',
  'Event badge type',
  'Demo requested',
  'Trial start date',
  'Trial end date',
  'Free trial plan',
  'Signup channel',
  'GDPR consent date',
  'Preferred contact method',
  'Sales region manager',
];
const HEADER = [
  'Record ID',
  'First Name',
  'Last Name',
  'Email',
  'Phone Number',
  'Company Name',
  ...HUBSPOT_PROPERTIES.slice(1),
];

/** Every fourth property of a row is empty (as in a real export), a different quarter for each row. */
function wideRow(index: number): { cells: string[]; custom: [string, string][] } {
  const standard = [
    `Ada${index}`,
    'Lovelace',
    `ada${index}@wide-export.test`,
    `+1 415 555 01${index}0`,
    'Analytical Engines',
  ];
  const custom: [string, string][] = [];
  const properties = HUBSPOT_PROPERTIES.map((property, position) => {
    const value = (position + index) % 4 === 0 ? '' : `${property} of ${index}`;
    if (value !== '') custom.push([property, value]);
    return value;
  });
  return { cells: [properties[0]!, ...standard, ...properties.slice(1)], custom };
}

const csvOf = (rows: string[][]) =>
  rows.map((cells) => cells.map((cell) => JSON.stringify(cell)).join(',')).join('\r\n');

describe('a wide export (more custom columns than a lead keeps)', () => {
  it('imports every row of a 150-column HubSpot export with its first 100 custom fields, and says what it left out', async () => {
    expect(HEADER).toHaveLength(150);
    const rows = [1, 2, 3].map(wideRow);
    const csv = csvOf([HEADER, ...rows.map((row) => row.cells)]);
    const trimmedRows = rows.map((row, index) => ({
      row: index + 2,
      reason: `${row.custom.length - 100} custom columns not kept: a lead keeps at most 100 custom fields (first dropped: ${row.custom[100]![0]})`,
    }));
    expect(rows.every((row) => row.custom.length > 100)).toBe(true);

    const dryRun = await api.post('/api/leads/import?dryRun=true', undefined, {
      payload: csv,
      headers: { 'content-type': 'text/csv' },
    });
    expect(dryRun.status).toBe(200);
    expect(dryRun.body).toMatchObject({ rows: 3, accepted: 3, failed: 0, trimmed: 3, trimmedRows });
    const { preview } = dryRun.body as { preview: { custom: Record<string, string> }[] };
    expect(preview.map((row) => row.custom)).toEqual(
      rows.map((row) => Object.fromEntries(row.custom.slice(0, 100))),
    );

    const { status, body } = await importCsv(harness, csv);
    expect(status).toBe(200);
    expect(body).toMatchObject({ rows: 3, accepted: 3, failed: 0, errors: [], trimmed: 3, trimmedRows });
    const columns = (body as unknown as { columns: { mapsTo: string }[] }).columns;
    expect(columns.filter((column) => column.mapsTo !== 'custom')).toHaveLength(5);
    expect(await importDone(harness, body.statusUrl)).toMatchObject({
      created: 3,
      failed: 0,
      trimmed: 3,
      trimmedRows,
    });
    const leads = await importedLeads(harness, body.importId);
    expect(leads).toHaveLength(3);
    leads.forEach((lead, index) => {
      expect(lead).toMatchObject({
        firstName: `Ada${index + 1}`,
        lastName: 'Lovelace',
        email: `ada${index + 1}@wide-export.test`,
        company: 'Analytical Engines',
      });
      expect(lead.phone).toBeTruthy();
      expect(lead.customFields).toEqual(Object.fromEntries(rows[index]!.custom.slice(0, 100)));
    });
  });

  it('imports a row with a 40 KiB notes cell without that cell, and still fails a row with an invalid e-mail', async () => {
    const notes = 'Called twice, left a voicemail. '.repeat(1280); // 40 KiB
    const csv = csvOf([
      ['Email', 'First Name', 'Notes', 'City'],
      ['long@notes.test', 'Grace', notes, 'Arlington'],
      ['not-an-email', 'Alan', 'short', 'London'],
    ]);
    const reason =
      '1 custom column not kept: a lead keeps at most 32 KiB of custom data (first dropped: Notes)';
    const { status, body } = await importCsv(harness, csv);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      accepted: 1,
      failed: 1,
      errors: [{ row: 3, error: 'Invalid email: not-an-email' }],
      trimmed: 1,
      trimmedRows: [{ row: 2, reason }],
    });
    expect(await importDone(harness, body.statusUrl)).toMatchObject({
      created: 1,
      failed: 1,
      trimmed: 1,
      trimmedRows: [{ row: 2, reason }],
    });
    const [lead] = await importedLeads(harness, body.importId);
    expect(lead).toMatchObject({
      email: 'long@notes.test',
      firstName: 'Grace',
      customFields: { City: 'Arlington' },
    });
    expect(lead!.customFields).not.toHaveProperty('Notes');
  });
});
