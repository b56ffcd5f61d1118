/** The helpers the lead service's capture and progress tests share, over the file's `harness` (api-fixtures). */

import { api, harness } from './api-fixtures.js';

export async function timelineTypes(leadId: string): Promise<string[]> {
  const body = (await api.get(`/api/leads/${leadId}/events`)).body as { data: { type: string }[] };
  return body.data.map((entry) => entry.type);
}

/**
 * Waits until the service's consumers finished on each event (one listed twice, twice) and all it
 * published since has been recorded: what is not there then was not done.
 */
export async function settle(...events: ReadonlyArray<{ id: string }>): Promise<void> {
  await harness.handled.settled('the events under test', events);
  await harness.drained();
}
