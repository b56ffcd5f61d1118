import { randomUUID } from 'node:crypto';
import { parseString } from 'fast-csv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiLead, captureLead, client, type Harness, startHarness } from './harness.js';

async function parseCsv(text: string): Promise<string[][]> {
  const rows: string[][] = [];
  await new Promise<void>((resolve, reject) => {
    parseString(text, { headers: false })
      .on('data', (row: string[]) => rows.push(row))
      .on('error', reject)
      .on('end', () => resolve());
  });
  return rows;
}

describe('export', () => {
  let exporting: Harness;
  let exportApi: ReturnType<typeof client>;
  const leads: ApiLead[] = [];

  beforeAll(async () => {
    exporting = await startHarness();
    exportApi = client(exporting);
    leads.push(
      await captureLead(exporting, {
        email: 'plain@example.com',
        firstName: 'Plain',
        lastName: 'Person',
        phone: '+1 415 555 0123',
        company: 'Normal, Inc',
      }),
    );
    leads.push(
      await captureLead(exporting, {
        email: 'evil@example.com',
        firstName: '=HYPERLINK("http://evil.test","click")',
        lastName: '+cmd|calc',
        company: '@SUM(A1:A2)',
        phone: '-1+1',
      }),
    );
    leads.push(
      await captureLead(
        exporting,
        { email: 'tab@example.com', firstName: 'Zoë', company: 'Ünïcödé GmbH' },
        { sourceName: '\tTabbed source' },
      ),
    );
    await exportApi.put(`/api/leads/${leads[0]!.id}/status`, { status: 'qualified' });
    await exportApi.post(`/api/leads/${leads[0]!.id}/tags`, { name: 'vip' });
    await exportApi.post(`/api/leads/${leads[0]!.id}/tags`, { name: 'webinar' });
  });
  afterAll(async () => exporting.close());

  it('downloads every matching lead as UTF-8 CSV with a header row', async () => {
    const response = await exportApi.get('/api/leads/export');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    const today = new Date().toISOString().slice(0, 10);
    expect(response.headers['content-disposition']).toBe(`attachment; filename="leads-${today}.csv"`);
    expect(
      response.text.startsWith(
        '\uFEFFid,firstName,lastName,email,phone,company,status,score,qualification,source,tags,assignedTo,createdAt\r\n',
      ),
    ).toBe(true);
    const rows = await parseCsv(response.text.slice(1));
    expect(rows).toHaveLength(4);
    const plain = rows.find((row) => row[0] === leads[0]!.id)!;
    expect(plain).toEqual([
      leads[0]!.id,
      'Plain',
      'Person',
      'plain@example.com',
      '+14155550123',
      'Normal, Inc',
      'qualified',
      '0',
      '',
      'Website form',
      'vip; webinar',
      '',
      leads[0]!.createdAt,
    ]);
    expect(rows.find((row) => row[0] === leads[2]!.id)!.slice(1, 6)).toEqual([
      'Zoë',
      '',
      'tab@example.com',
      '',
      'Ünïcödé GmbH',
    ]);
  });

  it('neutralises cells a spreadsheet would run as a formula, but not E.164 phone numbers', async () => {
    const rows = await parseCsv((await exportApi.get('/api/leads/export')).text.slice(1));
    const evil = rows.find((row) => row[0] === leads[1]!.id)!;
    expect(evil.slice(1, 6)).toEqual([
      `'=HYPERLINK("http://evil.test","click")`,
      `'+cmd|calc`,
      'evil@example.com',
      `'-1+1`,
      `'@SUM(A1:A2)`,
    ]);
    expect(rows.find((row) => row[0] === leads[0]!.id)![4]).toBe('+14155550123');
    expect(rows.find((row) => row[0] === leads[2]!.id)![9]).toBe(`'\tTabbed source`);
  });

  it('applies the list filters and sort, validated the same way', async () => {
    const filtered = await parseCsv(
      (await exportApi.get('/api/leads/export?status=qualified')).text.slice(1),
    );
    expect(filtered.map((row) => row[0])).toEqual(['id', leads[0]!.id]);
    const searched = await parseCsv(
      (await exportApi.get('/api/leads/export?search=evil&sort=createdAt')).text.slice(1),
    );
    expect(searched.map((row) => row[0])).toEqual(['id', leads[1]!.id]);
    const oldestFirst = await parseCsv(
      (await exportApi.get('/api/leads/export?sort=createdAt&page=2&limit=1')).text.slice(1),
    );
    expect(oldestFirst.slice(1).map((row) => row[0])).toEqual(leads.map((lead) => lead.id));
    const invalid = await exportApi.get('/api/leads/export?status=won');
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({
      error: 'status must be one of: new, contacted, qualified, converted, closed',
    });
    await exporting.store
      .collection('lead_leads')
      .updateOne({ _id: leads[0]!.id }, { $set: { qualification: 'hot' } });
    const hotVip = await parseCsv(
      (await exportApi.get('/api/leads/export?qualification=hot&tag=VIP')).text.slice(1),
    );
    expect(hotVip.map((row) => row[0])).toEqual(['id', leads[0]!.id]);
    const cold = await parseCsv((await exportApi.get('/api/leads/export?qualification=cold')).text.slice(1));
    expect(cold.map((row) => row[0])).toEqual(['id']);
    const badQualification = await exportApi.get('/api/leads/export?qualification=boiling');
    expect(badQualification.status).toBe(400);
    expect(badQualification.body).toEqual({ error: 'qualification must be one of: hot, warm, cold' });
    const empty = await exportApi.get(`/api/leads/export?sourceId=${randomUUID()}`);
    expect(empty.text).toBe(
      '\uFEFFid,firstName,lastName,email,phone,company,status,score,qualification,source,tags,assignedTo,createdAt\r\n',
    );
  });
});
