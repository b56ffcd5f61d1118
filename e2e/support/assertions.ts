import { expect } from 'vitest';
import { type Api, countByEmail, type TimelineEntry } from './api.js';

/** The timeline entries a webhook lead collects on its way through the chain, in order. */
export const CHAIN_ENTRIES = ['created', 'enriched', 'scored', 'notified', 'enrolled'];

/** The timeline (newest first, as the API answers) holds each stage of the chain once, in order. */
export function expectChainInOrder(newestFirst: readonly TimelineEntry[]): void {
  const stages = [...newestFirst]
    .reverse()
    .map((entry) => entry.type)
    .filter((type) => CHAIN_ENTRIES.includes(type));
  expect(stages).toEqual(CHAIN_ENTRIES);
}

/**
 * The promise of a 200: every accepted e-mail ends up listed exactly once (no lead lost, none
 * doubled), and nothing else carries the tag. Waits until the intake reports every accepted
 * submission of the source as a lead, so the list is read once the capture has settled (within
 * `timeoutMs`, default PROCESSED_WITHIN_MS: longer after an outage, while the relay catches up).
 */
export async function expectEachListedOnce(
  api: Api,
  sourceId: string,
  tag: string,
  accepted: readonly string[],
  timeoutMs?: number,
): Promise<void> {
  await api.submissionsBecameLeads(sourceId, accepted.length, timeoutMs);
  await api.leadsListed(tag, accepted.length, timeoutMs);
  const counts = countByEmail(await api.searchLeads(tag));
  expect([...counts.keys()].sort()).toEqual([...accepted].sort());
  expect([...counts.entries()].filter(([, count]) => count !== 1)).toEqual([]);
}
