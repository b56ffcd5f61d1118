/** The shared set-up and helpers of the lead service's API tests. */

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { type ApiLead, addUser as addHarnessUser, client, type Harness, startHarness } from './harness.js';

export const LIST_FIELDS = [
  'id',
  'firstName',
  'lastName',
  'email',
  'phone',
  'company',
  'status',
  'score',
  'qualification',
  'source',
  'assignedTo',
  'isDuplicate',
  'duplicateOf',
  'createdAt',
  // Extensions of the contract, the same as the detail's.
  'pipeline',
  'stage',
  'tags',
].sort();

export const DETAIL_FIELDS = [
  ...LIST_FIELDS,
  'phoneOriginal',
  'notes',
  'customFields',
  'attribution',
  'client',
  'enrichment',
  'scoreReasons',
  'notifications',
  'enrollments',
  'updatedAt',
].sort();

export interface TimelineEntry {
  id: string;
  type: string;
  occurredAt: string;
  actor: Record<string, string> | null;
  data: Record<string, unknown>;
}

export interface ListBody {
  data: ApiLead[];
  pagination: { page: number; limit: number; total: number; pages: number };
}

/** The file's lead service, started by `useLeadApi` before its tests (a live binding: read it in tests only). */
export let harness: Harness;
export let api: ReturnType<typeof client>;

/** Starts one lead service for the calling test file's tests (`harness`, `api`), and stops it after them. */
export function useLeadApi(options?: Parameters<typeof startHarness>[0]): void {
  beforeAll(async () => {
    harness = await startHarness(options);
    api = client(harness);
  });
  afterAll(async () => harness.close());
}

export async function timeline(leadId: string): Promise<TimelineEntry[]> {
  const response = await api.get(`/api/leads/${leadId}/events`);
  expect(response.status).toBe(200);
  return (response.body as { data: TimelineEntry[] }).data;
}

export function addUser(active = true): Promise<string> {
  return addHarnessUser(harness, { active });
}

export function uniqueEmail(label: string): string {
  return `${label}.${randomUUID().slice(0, 8)}@example.com`;
}
