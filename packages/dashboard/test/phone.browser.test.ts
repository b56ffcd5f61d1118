import { randomUUID } from 'node:crypto';
import { waitFor } from '@lead-capture/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  requireChromium,
  saveScreenshot,
  startWebhookReceiver,
  useDashboard,
  type WebhookReceiver,
} from './harness.js';

/**
 * Every screen besides the leads table (teamwork.browser.test.ts covers it) at a phone's 390x844 and
 * a desktop's 1440x900 (issue 30): the page never scrolls sideways, and no control, heading or table
 * cell lies outside the viewport (the board's columns scroll inside the board, so only its first
 * column is checked). Wide tables are cards on the phone, each value labelled.
 */
const chromiumPresent = requireChromium();

interface Source {
  id: string;
  webhookUrl: string;
}

interface Offender {
  element: string;
  left: number;
  right: number;
}

/**
 * Visible controls, headings and cells of the page that are not inside the viewport's width. A
 * string, run in the page (the tests are typed without the DOM's types).
 */
const OFFENDERS = `(() => {
  const width = window.innerWidth;
  const found = [];
  const selector = 'main button, main a, main input, main select, main textarea, main h1, main h2, main td, main th';
  for (const element of document.querySelectorAll(selector)) {
    const box = element.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1) continue; // hidden, or visually hidden
    // The board's columns scroll inside the board: its first column is what the screen shows.
    const column = element.closest('.board .column');
    if (column && column !== column.parentElement.firstElementChild) continue;
    if (box.left < -1 || box.right > width + 1) {
      const label = element.getAttribute('aria-label') ?? element.textContent.trim().slice(0, 40);
      found.push({ element: element.tagName.toLowerCase() + ' "' + label + '"', left: box.left, right: box.right });
    }
  }
  return found;
})()`;

async function offenders(page: Page): Promise<Offender[]> {
  return page.evaluate<Offender[]>(OFFENDERS);
}

describe.runIf(chromiumPresent)('every screen on a phone and a desktop', () => {
  let receiver: WebhookReceiver;
  let source: Source;
  let subscriptionId: string;
  const email = `a.rather.long.address.${randomUUID().slice(0, 8)}@subsidiary.example-company.com`;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver?.close());
  const session = useDashboard({
    env: { OUTBOUND_WEBHOOK_ALLOW_HTTP: 'true', OUTBOUND_WEBHOOK_ALLOW_PRIVATE: 'true' },
    prepare: async () => {
      // Long values, as real workspaces have: the cards must wrap them, not the page.
      source = await session.api.call<Source>('POST', '/api/sources', {
        name: 'Spring conference landing page form',
      });
      const subscription = await session.api.call<{ id: string }>('POST', '/api/webhook-subscriptions', {
        url: `${receiver.url}/with/a/long/path/for/the/crm/integration`,
        eventTypes: ['lead.captured', 'lead.scored', 'lead.updated'],
        description: 'CRM sync for the sales team',
      });
      subscriptionId = subscription.id;
      await session.api.call('POST', '/api/users', {
        email: `someone.with.a.long.name.${randomUUID().slice(0, 6)}@example-company.com`,
        password: 'phone-member-password-1',
        name: 'Maximiliana Featherstonehaugh',
        role: 'member',
      });
      await session.api.call('POST', '/api/api-keys', {
        label: 'Zapier integration for the sales team',
        scope: 'read',
      });
      await session.api.call('POST', '/api/sequences', {
        name: 'Everyone who signs up',
        active: true,
        match: {},
        steps: [{ delayMinutes: 2880, subject: 'Following up', body: 'Any questions?' }],
      });
      const response = await fetch(source.webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email,
          firstName: 'Bartholomew',
          lastName: 'Montgomery-Smythe',
          company: 'Example',
        }),
      });
      expect(response.status).toBe(200);
      await waitFor('the lead delivered to the subscription', () =>
        receiver.received.some((hit) => hit.body.includes(email)),
      );
    },
    // Each test saves its screenshots itself, one a screen and size.
    screenshots: false,
  });

  /** Each screen: where it is, and what shows it has drawn its content. */
  const screens: { name: string; open: () => Promise<void> }[] = [
    {
      name: 'sources',
      open: async () => {
        await session.page.goto(`${session.app.url}/sources`);
        await session.page.getByRole('button', { name: 'Spring conference landing page form' }).waitFor();
      },
    },
    {
      name: 'source-detail',
      open: async () => {
        await session.page.goto(`${session.app.url}/sources?source=${source.id}`);
        await session.page.getByRole('button', { name: 'Add mapping' }).waitFor();
        await session.page.locator('td', { hasText: email }).first().waitFor();
      },
    },
    {
      name: 'webhooks',
      open: async () => {
        await session.page.goto(`${session.app.url}/webhooks`);
        await session.page.locator('td', { hasText: 'CRM sync for the sales team' }).waitFor();
      },
    },
    {
      name: 'webhook-detail',
      open: async () => {
        await session.page.goto(`${session.app.url}/webhooks?subscription=${subscriptionId}`);
        await session.page.locator('table.deliveries td', { hasText: 'succeeded' }).first().waitFor();
      },
    },
    {
      name: 'users',
      open: async () => {
        await session.page.goto(`${session.app.url}/users`);
        await session.page.locator('td', { hasText: 'Maximiliana Featherstonehaugh' }).waitFor();
      },
    },
    {
      name: 'api-keys',
      open: async () => {
        await session.page.goto(`${session.app.url}/api-keys`);
        await session.page.locator('td', { hasText: 'Zapier integration' }).waitFor();
      },
    },
    {
      name: 'board',
      open: async () => {
        await session.page.goto(`${session.app.url}/board`);
        await session.page.getByText('Bartholomew Montgomery-Smythe').first().waitFor();
      },
    },
    {
      name: 'sequences',
      open: async () => {
        await session.page.goto(`${session.app.url}/sequences`);
        await session.page.getByRole('button', { name: 'Everyone who signs up' }).click();
        await session.page.locator('td', { hasText: 'Bartholomew' }).first().waitFor();
      },
    },
    {
      name: 'settings',
      open: async () => {
        await session.page.goto(`${session.app.url}/settings`);
        await session.page.locator('main button[type="submit"]').first().waitFor();
      },
    },
    {
      name: 'overview',
      open: async () => {
        await session.page.goto(`${session.app.url}/overview`);
        await session.page.locator('main .stat').first().waitFor();
      },
    },
    {
      name: 'import',
      open: async () => {
        await session.page.goto(`${session.app.url}/import`);
        await session.page.locator('main input[type="file"]').waitFor({ state: 'attached' });
      },
    },
    {
      name: 'account',
      open: async () => {
        await session.page.goto(`${session.app.url}/account`);
        await session.page.getByLabel('Current password').waitFor();
      },
    },
    {
      name: 'pipelines',
      open: async () => {
        await session.page.goto(`${session.app.url}/pipelines`);
        await session.page.locator('main h1').waitFor();
      },
    },
    {
      name: 'dead-letters',
      open: async () => {
        await session.page.goto(`${session.app.url}/dead-letters`);
        await session.page.locator('main h1').waitFor();
      },
    },
  ];

  for (const size of [
    { label: 'phone', width: 390, height: 844 },
    { label: 'desktop', width: 1440, height: 900 },
  ]) {
    it(`fits every screen in ${size.width}x${size.height} (${size.label})`, async () => {
      await session.page.setViewportSize({ width: size.width, height: size.height });
      const problems: string[] = [];
      for (const screen of screens) {
        await screen.open();
        await saveScreenshot(session.page, `phone-${size.label}-${screen.name}`);
        const scrollWidth = await session.page.evaluate<number>('document.documentElement.scrollWidth');
        if (scrollWidth > size.width) problems.push(`${screen.name}: the page is ${scrollWidth}px wide`);
        for (const offender of await offenders(session.page))
          problems.push(`${screen.name}: ${offender.element} at ${offender.left}..${offender.right}px`);
      }
      expect(problems).toEqual([]);
    });
  }

  it('labels each value of a table shown as cards on the phone', async () => {
    await session.page.setViewportSize({ width: 390, height: 844 });
    await session.page.goto(`${session.app.url}/users`);
    const cell = session.page.locator('td', { hasText: 'Maximiliana Featherstonehaugh' });
    await cell.waitFor();
    const label = await cell.evaluate((element) => {
      const view = globalThis as unknown as {
        getComputedStyle(element: unknown, pseudo: string): { content: string };
      };
      return view.getComputedStyle(element, '::before').content;
    });
    expect(label).toBe('"Name"');
    expect(await session.page.locator('table.card-table thead').isVisible()).toBe(false);
  });
});
