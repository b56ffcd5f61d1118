import { randomUUID } from 'node:crypto';
import { waitFor } from '@lead-capture/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, apiClient, requireChromium, saveScreenshot, useDashboard } from './harness.js';

/**
 * What a sales team needs to work together (issue 30): bulk actions on selected rows, a column
 * chooser remembered by the browser, the notes history in the drawer, keyboard shortcuts, and the
 * leads as cards on a phone. One app and one signed-in page, the tests in order.
 */
const chromiumPresent = requireChromium();

interface Lead {
  id: string;
  company: string | null;
  assignedTo: string | null;
  status: string;
  tags: { id: string; name: string }[];
  stage: { id: string; name: string } | null;
}
interface LeadList {
  data: Lead[];
  pagination: { total: number };
}

describe.runIf(chromiumPresent)('the dashboard for team work', () => {
  const batch = `Teamwork ${randomUUID().slice(0, 6)}`;
  const member = { email: 'bea@example.com', password: 'bea-member-password-1', name: 'Bea Member' };
  let memberId: string;
  let leads: Lead[];
  let adminName: string;

  /** The batch's leads, newest first (the table's order). */
  async function batchLeads(): Promise<Lead[]> {
    const list = await session.api.call<LeadList>(
      'GET',
      `/api/leads?search=${encodeURIComponent(batch)}&limit=100`,
    );
    return list.data;
  }

  const session = useDashboard({
    prepare: async () => {
      adminName = (await session.api.call<{ name: string }>('GET', '/api/auth/me')).name;
      memberId = (await session.api.call<{ id: string }>('POST', '/api/users', { ...member, role: 'member' }))
        .id;
      const rows = Array.from(
        { length: 12 },
        (_, i) => `lead${i}.${randomUUID().slice(0, 6)}@example.com,Lead${i},${batch}`,
      );
      const token = (await session.api.call<{ token: string }>('POST', '/api/auth/login', ADMIN)).token;
      const response = await fetch(`${session.app.url}/api/leads/import`, {
        method: 'POST',
        headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}` },
        body: `email,firstName,company\n${rows.join('\n')}\n`,
      });
      expect(response.status).toBe(200);
      await waitFor('the batch captured', async () => (await batchLeads()).length === 12, 60_000);
      leads = await batchLeads();
    },
    viewport: { width: 1440, height: 900 },
  });
  beforeAll(async () => {
    await session.page.goto(`${session.app.url}/?search=${encodeURIComponent(batch)}`);
    await session.page.locator('table.leads tbody tr').nth(11).waitFor();
  });

  const rowOf = (id: string) => session.page.locator(`tr[data-lead-id="${id}"]`);
  const checkboxOf = (id: string) => rowOf(id).getByRole('checkbox');
  const bulkBar = () => session.page.getByRole('region', { name: 'Bulk actions' });

  async function applyBulk(action: string, value?: string, fill?: string) {
    await bulkBar().getByLabel('Action').selectOption({ label: action });
    if (value !== undefined) await session.page.locator('#bulk-value').selectOption({ label: value });
    if (fill !== undefined) await session.page.locator('#bulk-value').fill(fill);
    await bulkBar()
      .getByRole('button', { name: /^(Apply|Delete \d+)$/ })
      .click();
  }

  it('selects rows one by one, by a shift-click range and the whole page, and applies bulk actions', async () => {
    await checkboxOf(leads[0]!.id).click();
    await checkboxOf(leads[4]!.id).click({ modifiers: ['Shift'] });
    await bulkBar().getByText('5 selected').waitFor();
    await checkboxOf(leads[2]!.id).click();
    await bulkBar().getByText('4 selected').waitFor();

    await applyBulk('Assign to', member.name);
    await session.page.locator('.bulk-report').getByText('4 leads assigned.').waitFor();
    const assigned = new Map((await batchLeads()).map((lead) => [lead.id, lead.assignedTo]));
    expect(leads.map((lead) => assigned.get(lead.id) === memberId)).toEqual([
      true,
      true,
      false,
      true,
      true,
      ...Array(7).fill(false),
    ]);
    // The bulk change went through the single-lead path: the timeline says who assigned whom.
    const timeline = await session.api.call<{ data: { type: string }[] }>(
      'GET',
      `/api/leads/${leads[0]!.id}/events`,
    );
    expect(timeline.data.map((entry) => entry.type)).toContain('assigned');

    await session.page.getByRole('checkbox', { name: 'Select all leads on this page' }).check();
    await bulkBar().getByText('12 selected').waitFor();
    await applyBulk('Add tag', undefined, 'Priority, Q4');
    await session.page.locator('.bulk-report').getByText('12 leads tagged.').waitFor();
    expect(
      (await batchLeads()).every((lead) => lead.tags.map((tag) => tag.name).join() === 'Priority,Q4'),
    ).toBe(true);

    const pipeline = await session.api.call<{ stages: { id: string; name: string }[] }>(
      'POST',
      '/api/pipelines',
      {
        name: 'Enterprise',
        stages: [
          { name: 'Discovery', color: '#3366ff', order: 0 },
          { name: 'Proposal', color: '#22aa55', order: 1 },
        ],
      },
    );
    await bulkBar().getByRole('button', { name: 'Clear selection' }).click();
    await bulkBar().waitFor({ state: 'detached' });
    await checkboxOf(leads[5]!.id).click();
    await checkboxOf(leads[6]!.id).click();
    await applyBulk('Move to stage', 'Proposal');
    await session.page.locator('.bulk-report').getByText('2 leads moved.').waitFor();
    const staged = new Map((await batchLeads()).map((lead) => [lead.id, lead.stage?.id]));
    expect([staged.get(leads[5]!.id), staged.get(leads[6]!.id)]).toEqual([
      pipeline.stages[1]!.id,
      pipeline.stages[1]!.id,
    ]);

    // Delete asks first: dismissed, nothing is deleted.
    await bulkBar().getByRole('button', { name: 'Clear selection' }).click();
    await checkboxOf(leads[10]!.id).click();
    await checkboxOf(leads[11]!.id).click();
    let question = '';
    session.page.once('dialog', (dialog) => {
      question = dialog.message();
      void dialog.dismiss();
    });
    await applyBulk('Delete');
    expect(question).toBe('Delete these 2 leads? This cannot be undone.');
    expect((await batchLeads()).length).toBe(12);
    session.page.once('dialog', (dialog) => void dialog.accept());
    await bulkBar().getByRole('button', { name: 'Delete 2' }).click();
    await rowOf(leads[11]!.id).waitFor({ state: 'detached' });
    await rowOf(leads[10]!.id).waitFor({ state: 'detached' });
    expect((await batchLeads()).length).toBe(10);
    // Audited: who deleted which leads.
    const audit = await session.api.call<{ data: { action: string; change: Record<string, unknown> }[] }>(
      'GET',
      '/api/admin/audit-log?limit=20',
    );
    const entry = audit.data.find((item) => item.action === 'lead.bulk' && item.change.type === 'delete');
    expect(entry?.change.leadIds).toEqual([leads[10]!.id, leads[11]!.id]);
    leads = leads.slice(0, 10);
  });

  it('chooses the columns (phone, owner, stage, tags) and remembers them over a reload', async () => {
    const headers = () => session.page.locator('table.leads thead th').allTextContents();
    expect(await headers()).not.toContain('Owner');
    await session.page.locator('.column-chooser summary').click();
    for (const column of ['Phone', 'Owner', 'Stage', 'Tags'])
      await session.page.getByRole('checkbox', { name: column, exact: true }).check();
    await session.page.getByRole('checkbox', { name: 'E-mail', exact: true }).uncheck();
    await session.page.locator('.column-chooser summary').click();
    await session.page.reload();
    await rowOf(leads[0]!.id).waitFor();
    const shown = (await headers()).map((text) => text.replace(/[▲▼]/g, '').trim());
    expect(shown).toEqual([
      '',
      'Name',
      'Phone',
      'Company',
      'Status',
      'Score',
      'Qualification',
      'Owner',
      'Stage',
      'Tags',
      'Source',
      'Created',
    ]);
    await expect.poll(() => rowOf(leads[0]!.id).locator('td.col-owner').textContent()).toBe(member.name);
    expect(await rowOf(leads[5]!.id).locator('td.col-stage').textContent()).toBe('Proposal');
    expect(await rowOf(leads[0]!.id).locator('td.col-tags').textContent()).toMatch(/Priority\s*Q4/);
  });

  it('keeps notes as a history with author and time, live from teammates, deletable by their author', async () => {
    const lead = leads[1]!;
    await rowOf(lead.id).getByRole('button', { name: /Lead/ }).click();
    const drawer = session.page.getByRole('dialog');
    await drawer.getByRole('heading', { name: 'Notes' }).waitFor();
    await drawer.getByText('No notes yet.').waitFor();
    await drawer.getByLabel('Add a note').fill('First call: interested in the annual plan');
    await drawer.getByRole('button', { name: 'Add note' }).click();
    const notes = drawer.locator('ol.notes li');
    await notes.first().getByText('First call: interested in the annual plan').waitFor();
    expect(await notes.first().locator('.note-meta strong').textContent()).toBe(adminName);
    const time = notes.first().locator('time');
    expect(await time.textContent()).toMatch(/now|second|minute/);
    expect(await time.getAttribute('title')).toBe(
      await session.page.evaluate(
        (iso) => new Date(iso).toLocaleString(),
        (await time.getAttribute('datetime'))!,
      ),
    );

    // A teammate's note arrives without a reload, on top; the first is still there (a history).
    const bea = apiClient(session.app.url, member);
    await bea.call('POST', `/api/leads/${lead.id}/notes`, { text: 'Sent the proposal' });
    await notes.nth(1).waitFor();
    expect(await notes.locator('.note-text').allTextContents()).toEqual([
      'Sent the proposal',
      'First call: interested in the annual plan',
    ]);
    expect(await notes.first().locator('.note-meta strong').textContent()).toBe(member.name);

    // The contract's single notes field still works, shown as the pinned note.
    await session.api.call('PUT', `/api/leads/${lead.id}/notes`, { notes: 'Decision maker: CFO' });
    await drawer.locator('.note.pinned').getByText('Decision maker: CFO').waitFor();

    await saveScreenshot(session.page, 'notes-history-in-the-drawer');
    session.page.once('dialog', (dialog) => void dialog.accept());
    await notes
      .nth(1)
      .getByRole('button', { name: /Delete the note/ })
      .click();
    await expect.poll(() => notes.count()).toBe(1);
    const stored = await session.api.call<{ data: { text: string }[] }>('GET', `/api/leads/${lead.id}/notes`);
    expect(stored.data.map((note) => note.text)).toEqual(['Sent the proposal']);
    await session.page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });

    // The timeline tells the history in words, not event type names.
    await rowOf(lead.id).getByRole('button', { name: /Lead/ }).click();
    const timeline = session.page.getByRole('dialog').locator('ol.timeline');
    await timeline.getByText('Note added: "First call: interested in the annual plan"').waitFor();
    await timeline.getByText('A note deleted').waitFor();
    expect(await timeline.getByText(/^note (added|deleted)$/).count()).toBe(0);
    await session.page.keyboard.press('Escape');
    await session.page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  it('moves with j/k, opens with o, focuses the search with / and lists the shortcuts with ?', async () => {
    await session.page.reload();
    await rowOf(leads[0]!.id).waitFor();
    await session.page.locator('body').click({ position: { x: 5, y: 5 } });
    await session.page.keyboard.press('j');
    await session.page.keyboard.press('j');
    await session.page.keyboard.press('k');
    await session.page.keyboard.press('j');
    expect(
      await session.page.evaluate<string | undefined>(
        "document.activeElement?.closest('tr')?.dataset.leadId",
      ),
    ).toBe(leads[1]!.id);
    await session.page.keyboard.press('o');
    await session.page.getByRole('dialog').getByRole('heading', { name: 'Notes' }).waitFor();
    expect(new URL(session.page.url()).searchParams.get('lead')).toBe(leads[1]!.id);
    await session.page.keyboard.press('Escape');
    await session.page.getByRole('dialog').waitFor({ state: 'detached' });

    await session.page.keyboard.press('x');
    await bulkBar().getByText('1 selected').waitFor();
    await session.page.keyboard.press('a');
    await expect
      .poll(() => session.page.evaluate<string | undefined>('document.activeElement?.id'))
      .toBe('bulk-value');
    await session.page.locator('body').click({ position: { x: 5, y: 5 } });

    await session.page.keyboard.press('/');
    expect(await session.page.evaluate<string | undefined>('document.activeElement?.name')).toBe('search');
    await session.page.locator('body').click({ position: { x: 5, y: 5 } });
    await session.page.keyboard.press('?');
    const help = session.page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    expect(await help.textContent()).toContain('Next lead');
    await saveScreenshot(session.page, 'keyboard-shortcuts-dialog');
    await help.getByRole('button', { name: 'Close' }).click();
  });

  it('shows leads as cards on a phone, score and date on screen, and selects from there', async () => {
    await session.page.setViewportSize({ width: 390, height: 844 });
    await session.page.reload();
    const first = rowOf(leads[0]!.id);
    await first.waitFor();
    expect(await session.page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
      390,
    );
    for (const cell of ['td.col-score', 'td.col-createdAt', 'td.name-col']) {
      const box = await first.locator(cell).boundingBox();
      expect(box, cell).not.toBeNull();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, cell).toBeLessThanOrEqual(390);
    }
    // Each value is labelled on the card.
    expect(await first.locator('td.col-score').textContent()).toMatch(/^\d+$/);
    expect(
      await first.locator('td.col-score').evaluate((cell) => {
        const view = globalThis as unknown as {
          getComputedStyle(element: unknown, pseudo: string): { content: string };
        };
        return view.getComputedStyle(cell, '::before').content;
      }),
    ).toBe('"Score"');
    await session.page.getByLabel('Select all on this page').check();
    await bulkBar().getByText('10 selected').waitFor();
    await session.page.getByLabel('Select all on this page').uncheck();
  });
});
