import { randomUUID } from 'node:crypto';
import { waitFor } from '@lead-capture/testing';
import { describe, expect, it } from 'vitest';
import { ADMIN, requireChromium, useDashboard } from './harness.js';

/**
 * The leads screen as a sales team uses it: a lead's whole attribution in its drawer, long values
 * wrapped on a phone, the keyboard's place kept when the drawer closes, and the last page's last
 * lead deleted. One app and one signed-in page, the tests in order.
 */
const chromiumPresent = requireChromium();

interface Source {
  id: string;
  webhookUrl: string;
}
interface LeadList {
  data: Array<{ id: string; email: string | null }>;
  pagination: { total: number };
}

describe.runIf(chromiumPresent)('the leads screen on a sales floor', () => {
  let source: Source;
  const tag = randomUUID().slice(0, 6);

  const session = useDashboard({
    prepare: async () => {
      // The source maps the form's page and click id fields to the lead's attribution.
      source = await session.api.call<Source>('POST', '/api/sources', {
        name: 'Landing pages',
        fieldMappings: { pageUrl: 'landingPage', gclid: 'gclid' },
      });
    },
    viewport: { width: 1280, height: 800 },
    // No DNS: an MX lookup of a made-up domain may wait for the resolver's timeout on a busy box,
    // past what a test waits for the lead to be scored.
    env: { ENRICHMENT_MX_LOOKUP: 'false' },
  });

  async function postLead(fields: Record<string, unknown>): Promise<void> {
    const response = await fetch(source.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(fields),
    });
    expect(response.status).toBe(200);
  }

  async function leadsMatching(search: string): Promise<LeadList> {
    return session.api.call<LeadList>('GET', `/api/leads?search=${encodeURIComponent(search)}&limit=100`);
  }

  async function openLead(search: string, name: RegExp) {
    const { page } = session;
    await page.goto(`${session.app.url}?search=${encodeURIComponent(search)}`);
    const opener = page.getByRole('button', { name });
    await opener.click();
    const drawer = page.getByRole('dialog');
    await drawer.getByRole('heading', { name: 'Details' }).waitFor();
    return { opener, drawer };
  }

  it('shows the landing page and the ad click id the source mapped, and wraps a long domain on a phone', async () => {
    const email = `buyer-${tag}@averyveryverylongcompanydomainnameforlongtesting-${tag}.example.com`;
    await postLead({
      email,
      firstName: 'Priya',
      lastName: 'Raman',
      company: 'Acme Industries',
      pageUrl: 'https://www.example.com/landing/spring-offer?variant=b',
      gclid: `EAIaIQobChMI-${tag}`,
    });
    await waitFor('the lead scored', async () => {
      const [lead] = (await leadsMatching(email)).data;
      if (!lead) return undefined;
      const detail = await session.api.call<{ scoreReasons: unknown[] }>('GET', `/api/leads/${lead.id}`);
      return detail.scoreReasons.length > 0;
    });

    const { drawer } = await openLead(email, /Priya Raman/);
    const details = drawer.locator('section[aria-labelledby="lead-fields"]');
    await expect
      .poll(() => details.textContent())
      .toContain('https://www.example.com/landing/spring-offer?variant=b');
    expect(await details.textContent()).toMatch(/Landing page/);
    expect(await details.textContent()).toMatch(new RegExp(`gclid\\s*EAIaIQobChMI-${tag}`));

    // On a phone the score reason naming the long domain stays inside the drawer.
    await session.page.setViewportSize({ width: 390, height: 844 });
    try {
      await drawer.getByText(/Business e-mail/).waitFor();
      // Every text of the drawer whose line box ends right of the drawer (run in the page).
      const outside = await session.page.evaluate<string[]>(`(() => {
        const dialog = document.querySelector('dialog.drawer');
        const right = dialog.getBoundingClientRect().right;
        const texts = [];
        const walker = document.createTreeWalker(dialog, NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) {
          const range = document.createRange();
          range.selectNodeContents(walker.currentNode);
          if ([...range.getClientRects()].some((rect) => rect.right > right + 1))
            texts.push(walker.currentNode.textContent);
        }
        return texts;
      })()`);
      expect(outside).toEqual([]);
    } finally {
      await session.page.keyboard.press('Escape');
      await session.page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('gives the focus back to the lead that was opened when its drawer closes', async () => {
    const email = `focus-${tag}@example.com`;
    await postLead({ email, firstName: 'Keyboard', lastName: 'User' });
    await waitFor('the lead listed', async () => (await leadsMatching(email)).data[0]);

    const focusedLead = () =>
      session.page.evaluate<string | undefined>(
        "document.activeElement?.closest('button.lead-open')?.textContent",
      );
    const { opener, drawer } = await openLead(email, /Keyboard User/);
    await session.page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });
    await expect.poll(focusedLead).toBe('Keyboard User');

    await opener.press('Enter');
    await drawer.getByRole('heading', { name: 'Details' }).waitFor();
    await drawer.getByRole('button', { name: 'Close' }).click();
    await drawer.waitFor({ state: 'detached' });
    await expect.poll(focusedLead).toBe('Keyboard User');
  });

  it("shows the last page that has leads when the last page's last lead is deleted", async () => {
    const search = `pager-${tag}`;
    for (let i = 1; i <= 21; i++)
      await postLead({ email: `${search}-${i}@example.com`, firstName: `Pager${i}`, lastName: 'Lead' });
    await waitFor('the 21 leads listed', async () => (await leadsMatching(search)).pagination.total === 21);

    const { page } = session;
    await page.goto(`${session.app.url}?search=${search}&page=2`);
    await expect.poll(() => page.locator('#leads-count').textContent()).toBe('21 leads · page 2 of 2');
    await page.locator('tbody tr button.lead-open').click();
    const drawer = page.getByRole('dialog');
    page.once('dialog', (dialog) => void dialog.accept());
    await drawer.getByRole('button', { name: 'Delete lead' }).click();
    await drawer.waitFor({ state: 'detached' });

    await expect.poll(() => page.locator('#leads-count').textContent()).toBe('20 leads · page 1 of 1');
    expect(await page.locator('tbody tr').count()).toBe(20);
    expect(await page.getByText('No lead matches these filters').count()).toBe(0);
    expect(new URL(page.url()).searchParams.get('page')).toBeNull();
  });

  it("says the API's refusal of a new user, API key or webhook subscription under the field it is about, the values kept", async () => {
    const { page } = session;
    // A field by the start of its label (the words of its problem are inside the label too).
    const field = (label: string) => page.getByLabel(new RegExp(`^${label.replace(/[()]/g, '\\$&')}`));
    /** The words an input is described by, when it is marked invalid. */
    const problemOf = (label: string) =>
      field(label).evaluate((input) => {
        if (input.getAttribute('aria-invalid') !== 'true') return undefined;
        const id = input.getAttribute('aria-describedby');
        return id ? input.ownerDocument.getElementById(id)?.textContent : undefined;
      });

    await page.goto(`${session.app.url}/users`);
    await field('Name').fill('Second Admin');
    await field('E-mail').fill(ADMIN.email);
    await field('Password').fill('short');
    await page.getByRole('button', { name: 'Add user' }).click();
    await expect.poll(() => problemOf('Password')).toMatch(/^Password must be at least \d+ characters/);

    await field('Password').fill('Long-enough-pass-123');
    await page.getByRole('button', { name: 'Add user' }).click();
    await expect.poll(() => problemOf('E-mail')).toBe('A user with this email already exists');
    expect(await problemOf('Password')).toBeUndefined();
    expect(await field('Name').inputValue()).toBe('Second Admin');

    await page.goto(`${session.app.url}/api-keys`);
    await field('Label').fill('Expired already');
    await field('Expires (optional)').fill('2020-01-01');
    await page.getByRole('button', { name: 'Generate key' }).click();
    await expect.poll(() => problemOf('Expires (optional)')).toBe('The expiry date must be in the future');
    expect(await session.api.call<unknown[]>('GET', '/api/api-keys')).toEqual([]);

    // A webhook subscription: a wrong alert e-mail, then an http URL, each under its own field.
    await page.goto(`${session.app.url}/webhooks`);
    await page.getByRole('button', { name: 'New subscription' }).click();
    await field('Target URL').fill('http://hooks.example.com/leads');
    await field('Alert e-mails').fill('ops@example.com, not-an-email');
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await expect
      .poll(() => problemOf('Alert e-mails'))
      .toBe('The alert e-mail "not-an-email" must be a valid email address');
    await field('Alert e-mails').fill('ops@example.com');
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await expect.poll(() => problemOf('Target URL')).toBe('The target URL must be an https URL');
    expect(await problemOf('Alert e-mails')).toBeUndefined();
    expect(await session.api.call<unknown[]>('GET', '/api/webhook-subscriptions')).toEqual([]);
  });

  it('lists a new hot lead on the "hot" filter when it is scored, though the reload on its capture came too early', async () => {
    const { page } = session;
    const search = `early-${tag}`;
    // The list reload that follows the capture is answered as the server did before the scoring
    // (the page as it was): what a reload racing the capture chain gets.
    let before: string | undefined;
    let answerAsBefore = false;
    await page.route(/\/api\/leads\?/, async (route) => {
      if (answerAsBefore && before !== undefined) {
        answerAsBefore = false;
        return route.fulfill({ status: 200, contentType: 'application/json', body: before });
      }
      const response = await route.fetch();
      before = await response.text();
      return route.fulfill({ response, body: before });
    });
    try {
      await page.goto(`${session.app.url}?qualification=hot&search=${search}`);
      await page.getByText('No lead matches these filters').waitFor();
      answerAsBefore = true;
      await postLead({
        email: `${search}@megacorp-industries.com`,
        firstName: 'Early',
        lastName: 'Reload',
        phone: '+1 415 555 0142',
        company: 'MegaCorp',
        _utm: { utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'spring' },
        _referrer: 'https://www.google.com/',
      });
      await page.getByRole('button', { name: 'Early Reload' }).waitFor({ timeout: 10_000 });
      expect(answerAsBefore).toBe(false);
      const [lead] = (await leadsMatching(search)).data;
      expect(
        (await session.api.call<{ qualification: string }>('GET', `/api/leads/${lead!.id}`)).qualification,
      ).toBe('hot');
    } finally {
      await page.unroute(/\/api\/leads\?/);
    }
  });

  it('loads the list again by itself after a live reload failed, and says why in words meanwhile', async () => {
    const { page } = session;
    const search = `retry-${tag}`;
    let failNext = false;
    await page.route(/\/api\/leads\?/, (route) => {
      if (!failNext) return route.continue();
      failNext = false;
      return route.abort('internetdisconnected');
    });
    try {
      await page.goto(`${session.app.url}?search=${search}`);
      await page.getByText('No lead matches these filters').waitFor();
      failNext = true;
      await postLead({ email: `${search}@example.com`, firstName: 'Retry', lastName: 'Lead' });
      await page.getByText('The server could not be reached: check the connection.').waitFor();
      await page.getByRole('button', { name: 'Retry Lead' }).waitFor({ timeout: 15_000 });
      expect(await page.getByText('The server could not be reached').count()).toBe(0);
    } finally {
      await page.unroute(/\/api\/leads\?/);
    }
  });
});
