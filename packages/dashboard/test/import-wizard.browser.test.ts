import { randomUUID } from 'node:crypto';
import { waitFor } from '@lead-capture/testing';
import { describe, expect, it } from 'vitest';
import { requireChromium, useDashboard } from './harness.js';

/**
 * The import wizard's last mile (issue 30): the choice to enrol the imported leads in sequences,
 * made before the import (off unless asked: a 200-row upload used to enrol every row), and the
 * result with each failed row's number, its cells and why, also for a past import.
 */
const chromiumPresent = requireChromium();

interface LeadList {
  data: Array<{ id: string; email: string }>;
}

describe.runIf(chromiumPresent)('the import wizard', () => {
  let sequenceId: string;

  /** The leads of these e-mails once each has passed the sequence stage (its timeline says so). */
  async function throughTheChain(emails: string[]): Promise<string[]> {
    return Promise.all(
      emails.map(async (email) => {
        const lead = await waitFor(`the lead ${email}`, async () => {
          const list = await session.api.call<LeadList>(
            'GET',
            `/api/leads?search=${encodeURIComponent(email)}`,
          );
          return list.data.find((item) => item.email === email);
        });
        await waitFor(`${email} through the sequence stage`, async () => {
          const events = await session.api.call<{ data: Array<{ type: string }> }>(
            'GET',
            `/api/leads/${lead.id}/events`,
          );
          return events.data.some((event) => event.type === 'enrolled');
        });
        return lead.id;
      }),
    );
  }

  async function enrolledLeadIds(): Promise<string[]> {
    const list = await session.api.call<{ data: Array<{ leadId: string }> }>(
      'GET',
      `/api/sequences/${sequenceId}/enrollments?limit=100`,
    );
    return list.data.map((entry) => entry.leadId);
  }

  async function chooseFile(name: string, rows: string[]): Promise<void> {
    await session.page.getByLabel('CSV file').setInputFiles({
      name,
      mimeType: 'text/csv',
      buffer: Buffer.from(`email,firstName,company\n${rows.join('\n')}\n`),
    });
  }

  const session = useDashboard({
    prepare: async () => {
      // Every new lead matches it: only the import's choice keeps a lead out.
      sequenceId = (
        await session.api.call<{ id: string }>('POST', '/api/sequences', {
          name: 'Everyone',
          active: true,
          match: {},
          steps: [{ delayMinutes: 1440, subject: 'Hello', body: 'Welcome.' }],
        })
      ).id;
    },
    viewport: { width: 1440, height: 900 },
  });

  const batch = randomUUID().slice(0, 6);
  const quiet = [0, 1, 2].map((i) => `quiet${i}-${batch}@example.com`);
  const welcomed = [0, 1].map((i) => `welcomed${i}-${batch}@example.com`);

  it('imports without enrolling unless asked, and shows each failed row with its cells and why', async () => {
    await session.page.goto(`${session.app.url}/import`);
    await chooseFile('old-list.csv', [
      `${quiet[0]},Quiet,Old Co`,
      'not-an-email,Broken,Bad Co',
      `${quiet[1]},Quiet,Old Co`,
      ',,',
      `${quiet[2]},Quiet,Old Co`,
      'x@y.example,Too,many,cells',
    ]);
    // The dry run already lists what would fail, with the cells.
    const wouldFail = session.page.locator('table.failed-rows', { hasText: 'Rows that would fail' });
    await wouldFail.locator('td', { hasText: 'not-an-email, Broken, Bad Co' }).waitFor();
    const enrol = session.page.getByLabel('Enrol the imported leads in the sequences they match');
    expect(await enrol.isChecked()).toBe(false);
    const start = session.page.getByRole('button', { name: 'Import 3 rows' });
    await expect.poll(() => start.isEnabled()).toBe(true);
    await start.click();
    await session.page.getByRole('heading', { name: 'Import finished' }).waitFor({ timeout: 60_000 });
    expect(await session.page.getByTestId('import-enrolment').textContent()).toContain(
      'enrolled in no sequence',
    );

    const failed = session.page.locator('table.failed-rows', { hasText: 'Rows that were not imported' });
    await failed.waitFor();
    const rows = await failed
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) =>
          Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children).map(
            (cell) => cell.textContent?.trim(),
          ),
        ),
      );
    expect(rows).toEqual([
      ['3', 'not-an-email, Broken, Bad Co', 'Invalid email: not-an-email'],
      ['7', 'x@y.example, Too, many, cells', 'Row has 4 cells but the header has 3'],
    ]);
    // The blank row (5) is skipped, not failed. The leads passed the sequence stage, unenrolled.
    const ids = await throughTheChain(quiet);
    const enrolled = await enrolledLeadIds();
    for (const id of ids) expect(enrolled).not.toContain(id);
  });

  it('enrols the imported leads in the sequences they match when asked', async () => {
    await chooseFile(
      'event-signups.csv',
      welcomed.map((email) => `${email},Welcome,New Co`),
    );
    await session.page.getByLabel('Enrol the imported leads in the sequences they match').check();
    const start = session.page.getByRole('button', { name: 'Import 2 rows' });
    await expect.poll(() => start.isEnabled()).toBe(true);
    await start.click();
    await session.page
      .getByTestId('import-enrolment')
      .filter({ hasText: 'enrolled in the sequences they match' })
      .waitFor();
    const ids = await throughTheChain(welcomed);
    const enrolled = await enrolledLeadIds();
    for (const id of ids) expect(enrolled).toContain(id);
  });

  it("opens a past import's failed rows from the list of recent imports, on a phone too", async () => {
    await session.page.goto(`${session.app.url}/import`);
    // Over a reload the list still says which import enrolled nobody (the status's enrol).
    const history = session.page.locator('section[aria-labelledby="import-history-title"] li');
    await history.first().waitFor();
    expect(await history.allTextContents()).toEqual([
      expect.not.stringContaining('enrolled in no sequence'),
      expect.stringContaining('2 failed; enrolled in no sequence'),
    ]);
    await session.page.getByRole('button', { name: 'Show the failed rows' }).click();
    const past = session.page.locator('table.failed-rows', { hasText: 'that were not imported' });
    await past.locator('td', { hasText: 'Invalid email: not-an-email' }).waitFor();
    await session.page.setViewportSize({ width: 390, height: 844 });
    expect(await session.page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
      390,
    );
    const cell = past.locator('td', { hasText: 'not-an-email, Broken, Bad Co' });
    const box = await cell.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await session.page.setViewportSize({ width: 1440, height: 900 });
  });

  it('says which rows are imported without some custom columns, before and after the import', async () => {
    await session.page.goto(`${session.app.url}/import`);
    // A wide CRM export: 101 filled custom columns, one more than a lead keeps.
    const custom = Array.from({ length: 101 }, (_, i) => `Property ${i}`);
    await session.page.getByLabel('CSV file').setInputFiles({
      name: 'hubspot-all-properties.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(
        `email,${custom.join(',')}\nwide-${batch}@example.com,${custom.map((_, i) => `v${i}`).join(',')}\n`,
      ),
    });
    const reason =
      '1 custom column not kept: a lead keeps at most 100 custom fields (first dropped: Property 100)';
    const wouldTrim = session.page.locator('table.trimmed-rows', { hasText: 'would be imported without' });
    await wouldTrim.locator('td', { hasText: reason }).waitFor();
    const start = session.page.getByRole('button', { name: 'Import 1 row' });
    await expect.poll(() => start.isEnabled()).toBe(true);
    await start.click();
    await session.page.getByRole('heading', { name: 'Import finished' }).waitFor({ timeout: 60_000 });
    const trimmed = session.page.locator('table.trimmed-rows', { hasText: 'Rows imported without' });
    await trimmed.locator('tbody tr', { hasText: reason }).waitFor();
    expect(await trimmed.locator('tbody tr td').first().textContent()).toBe('2');
    // One row is "1 row", in the progress and in the list of recent imports.
    await session.page.getByText('1 of 1 row processed: 1 created').waitFor();
    await session.page.locator('li', { hasText: 'done: 1 row, 1 created' }).first().waitFor();
  });
});
