import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLead, type Harness, startHarness } from './harness.js';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});

afterAll(async () => {
  await harness?.close();
});

describe('lead detail attribution', () => {
  it('shows the landing page and the click ids the lead arrived with', async () => {
    const lead = await captureLead(
      harness,
      { email: `${randomUUID()}@example.com` },
      {
        attribution: {
          utm: { utm_source: 'google', utm_campaign: 'spring' },
          referrer: 'https://www.google.com/',
          landingPage: 'https://example.com/offer?gclid=abc',
          clickIds: { gclid: 'abc', fbclid: 'IwAR0x' },
        },
      },
    );
    expect((lead as unknown as { attribution: unknown }).attribution).toEqual({
      utm: { utm_source: 'google', utm_campaign: 'spring' },
      referrer: 'https://www.google.com/',
      landingPage: 'https://example.com/offer?gclid=abc',
      clickIds: { gclid: 'abc', fbclid: 'IwAR0x' },
    });
  });

  it('shows null and an empty object when the sender gave neither', async () => {
    const lead = await captureLead(
      harness,
      { email: `${randomUUID()}@example.com` },
      { attribution: { utm: {} } },
    );
    expect((lead as unknown as { attribution: unknown }).attribution).toEqual({
      utm: {},
      referrer: null,
      landingPage: null,
      clickIds: {},
    });
  });
});
