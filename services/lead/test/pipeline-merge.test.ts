import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLead, client, getLead, type Harness, startHarness } from './harness.js';

let harness: Harness;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  harness = await startHarness();
  api = client(harness);
});
afterAll(async () => harness.close());

const uniqueEmail = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;

interface Preview {
  primaryId: string;
  duplicateId: string;
  matchedOn: string[];
  combined: string[];
  fields: { field: string; primary: unknown; duplicate: unknown; merged: unknown; winner: string }[];
}

describe('GET /api/leads/<id>/merge-preview', () => {
  it('says what the merge will write and why the two match, and writes nothing', async () => {
    const email = uniqueEmail('preview');
    const primary = await captureLead(harness, { email, firstName: 'Mia' });
    const duplicate = await captureLead(harness, {
      email,
      firstName: 'Maria',
      lastName: 'Rossi',
      phone: '+39 06 6982 1234',
    });
    expect(duplicate.duplicateOf).toBe(primary.id);

    const response = await api.get(`/api/leads/${primary.id}/merge-preview?duplicateId=${duplicate.id}`, {
      scope: 'read',
    });
    expect(response.status).toBe(200);
    const preview = response.body as Preview;
    expect(preview).toMatchObject({ primaryId: primary.id, duplicateId: duplicate.id, matchedOn: ['email'] });
    expect(preview.combined).toContain('tags');
    const winners = Object.fromEntries(preview.fields.map((entry) => [entry.field, entry.winner]));
    expect(winners).toMatchObject({
      firstName: 'primary',
      lastName: 'duplicate',
      email: 'same',
      phone: 'duplicate',
      company: 'none',
    });
    // Nothing written: both leads are still there as they were.
    expect(await getLead(harness, duplicate.id)).toMatchObject({ firstName: 'Maria' });

    const merged = (await api.post(`/api/leads/${primary.id}/merge`, { duplicateId: duplicate.id }))
      .body as Record<string, unknown>;
    for (const entry of preview.fields)
      expect([entry.field, merged[entry.field]]).toEqual([entry.field, entry.merged]);
  });

  it('answers 400 for the lead itself, 404 for an unknown lead or duplicate, 400 without duplicateId', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('alone') });
    const self = await api.get(`/api/leads/${lead.id}/merge-preview?duplicateId=${lead.id}`);
    expect(self.status).toBe(400);
    expect(self.body).toEqual({ error: 'A lead cannot be merged into itself' });
    const unknown = await api.get(`/api/leads/${lead.id}/merge-preview?duplicateId=${randomUUID()}`);
    expect(unknown).toMatchObject({ status: 404, body: { error: 'Duplicate lead not found' } });
    const unknownPrimary = await api.get(`/api/leads/${randomUUID()}/merge-preview?duplicateId=${lead.id}`);
    expect(unknownPrimary).toMatchObject({ status: 404, body: { error: 'Lead not found' } });
    const malformed = await api.get(`/api/leads/${lead.id}/merge-preview?duplicateId=nope`);
    expect(malformed.status).toBe(404);
    const missing = await api.get(`/api/leads/${lead.id}/merge-preview`);
    expect(missing.status).toBe(400);
    expect(missing.body).toHaveProperty('error');
  });
});
