/** The shared set-up and helpers of the source service's API tests (sources-*.test.ts). */

import { afterEach, expect } from 'vitest';
import { type SourceHarness, startSourceHarness } from './harness.js';

export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43,}$/;
/** Every mapping target, as the 400 for a bad one lists them: the contract's five, then our additions. */
export const MAPPING_TARGET_LIST =
  'email, firstName, lastName, phone, company, fullName, utm_source, utm_medium, utm_campaign, utm_term, ' +
  'utm_content, referrer, landingPage, gclid, gbraid, wbraid, fbclid, msclkid, li_fat_id, ttclid, twclid';
/** What GET and PUT add to the contract's fields for a source created without a format or secrets. */
export const RECEIVING_DEFAULTS = {
  format: 'generic',
  nameSplit: 'first-word',
  secretsSet: { verifyToken: false, signingSecret: false, graphAccessToken: false },
};
/** What the events and the intake sync carry of a source created without a format or secrets. */
export const RECEIVING_STATE = {
  format: 'generic',
  nameSplit: 'first-word',
  verifyToken: null,
  signingSecret: null,
  graphAccessToken: null,
};

export interface CreatedSource {
  id: string;
  name: string;
  webhookToken: string;
  webhookUrl: string;
  fieldMappings: Record<string, string>;
  createdAt: string;
}

export interface Source extends CreatedSource {
  createdBy: { id: string; name: string | null; email: string | null };
}

/** The source service the running test started (`startSource`); stopped after each test by `closeSourceAfterEach`. */
export let h: SourceHarness;

export async function startSource(options?: Parameters<typeof startSourceHarness>[0]): Promise<void> {
  h = await startSourceHarness(options);
}

export function closeSourceAfterEach(): void {
  afterEach(async () => {
    await h?.close();
  });
}

export async function createSource(body: unknown = { name: 'Website form' }): Promise<CreatedSource> {
  const reply = await h.call('POST', '/api/sources', body);
  expect(reply.status).toBe(201);
  return reply.body as CreatedSource;
}
