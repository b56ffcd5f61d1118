import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  api,
  DETAIL_FIELDS,
  harness,
  LIST_FIELDS,
  timeline,
  uniqueEmail,
  useLeadApi,
} from './api-fixtures.js';
import { type ApiLead, captureLead } from './harness.js';

useLeadApi({ config: { DEFAULT_PHONE_REGION: 'US' } });

describe('duplicates and merge', () => {
  it('flags a lead with the same e-mail or phone as a duplicate of the original, and lists them', async () => {
    const email = uniqueEmail('dup');
    const original = await captureLead(harness, { email, firstName: 'Orig', phone: '+1 212 555 0142' });
    const sameEmail = await captureLead(harness, { email: email.toUpperCase() });
    const samePhone = await captureLead(harness, { email: uniqueEmail('other'), phone: '(212) 555-0142' });
    expect(original).toMatchObject({ isDuplicate: false, duplicateOf: null });
    expect(sameEmail).toMatchObject({ isDuplicate: true, duplicateOf: original.id });
    expect(samePhone).toMatchObject({ isDuplicate: true, duplicateOf: original.id });
    const response = await api.get(`/api/leads/${original.id}/duplicates`);
    expect(response.status).toBe(200);
    const duplicates = (response.body as { data: ApiLead[] }).data;
    expect(duplicates.map((lead) => lead.id)).toEqual([sameEmail.id, samePhone.id]);
    expect(Object.keys(duplicates[0]!).sort()).toEqual(LIST_FIELDS);
    expect((await api.get(`/api/leads/${sameEmail.id}/duplicates`)).body).toEqual({ data: [] });
    const detected = (await timeline(sameEmail.id)).find((entry) => entry.type === 'duplicate_detected');
    expect(detected?.data).toEqual({ duplicateOf: original.id });
  });

  it('points a lead matching a duplicate to the oldest original', async () => {
    const email = uniqueEmail('chain');
    const original = await captureLead(harness, { email });
    const duplicate = await captureLead(harness, { email, phone: '+1 646 555 0177' });
    const viaPhone = await captureLead(harness, { phone: '+1 646 555 0177' });
    expect(duplicate.duplicateOf).toBe(original.id);
    expect(viaPhone.duplicateOf).toBe(original.id);
  });

  it('merges the duplicate into the primary: fills gaps, combines tags, fields, notes and timeline, deletes it', async () => {
    const email = uniqueEmail('merge');
    const primary = await captureLead(harness, { email, firstName: 'Mia' });
    const duplicate = await captureLead(
      harness,
      { email, firstName: 'Maria', lastName: 'Rossi', company: 'Rossi SpA', phone: '+39 06 6982 1234' },
      { custom: { budget: '50k', industry: 'Food' } },
    );
    const third = await captureLead(harness, { email });
    await api.put(`/api/leads/${primary.id}/notes`, { notes: 'Primary notes' });
    await api.put(`/api/leads/${duplicate.id}/notes`, { notes: 'Duplicate notes' });
    await api.post(`/api/leads/${primary.id}/tags`, { name: 'merge-a' });
    await api.post(`/api/leads/${duplicate.id}/tags`, { name: 'merge-a' });
    await api.post(`/api/leads/${duplicate.id}/tags`, { name: 'merge-b' });
    await api.put(`/api/leads/${duplicate.id}/status`, { status: 'contacted' });

    const response = await api.post(`/api/leads/${primary.id}/merge`, { duplicateId: duplicate.id });
    expect(response.status).toBe(200);
    const merged = response.body as Record<string, unknown>;
    expect(Object.keys(merged).sort()).toEqual(DETAIL_FIELDS);
    expect(merged).toMatchObject({
      id: primary.id,
      firstName: 'Mia',
      lastName: 'Rossi',
      company: 'Rossi SpA',
      phone: '+390669821234',
      status: 'new',
      notes: 'Primary notes\n\nDuplicate notes',
      customFields: { budget: '10k', industry: 'Food' },
      isDuplicate: false,
    });
    expect((merged.tags as { name: string }[]).map((tag) => tag.name)).toEqual(['merge-a', 'merge-b']);
    expect((await api.get(`/api/leads/${duplicate.id}`)).status).toBe(404);
    expect((await api.get(`/api/leads/${third.id}`)).body).toMatchObject({ duplicateOf: primary.id });

    const entries = await timeline(primary.id);
    expect(entries[0]).toMatchObject({ type: 'merged', data: { duplicateId: duplicate.id } });
    const fromDuplicate = entries.filter((entry) => entry.type === 'status_changed');
    expect(fromDuplicate.map((entry) => entry.data)).toEqual([{ from: 'new', to: 'contacted' }]);
    expect(entries.filter((entry) => entry.type === 'created')).toHaveLength(2);
    expect(await harness.store.collection('lead_events').countDocuments({ leadId: duplicate.id })).toBe(0);
    expect(
      harness.published.some(
        (event) =>
          event.type === 'lead.merged' &&
          (event.data as { duplicateId: string }).duplicateId === duplicate.id,
      ),
    ).toBe(true);
    expect(
      harness.published.find(
        (event) =>
          event.type === 'lead.merged' &&
          (event.data as { duplicateId: string }).duplicateId === duplicate.id,
      )?.data,
    ).toEqual({
      primaryId: primary.id,
      duplicateId: duplicate.id,
    });
  });

  it('merges any two leads, even when not flagged as duplicates; the merged lead holds both identities', async () => {
    const primary = await captureLead(harness, { email: uniqueEmail('anyA') });
    const other = await captureLead(harness, { email: uniqueEmail('anyB'), phone: '+1 303 555 0111' });
    expect((await api.post(`/api/leads/${primary.id}/merge`, { duplicateId: other.id })).body).toMatchObject({
      phone: '+13035550111',
    });
    const later = await captureLead(harness, { phone: '303-555-0111' });
    expect(later).toMatchObject({ isDuplicate: true, duplicateOf: primary.id });
  });

  it('refuses merging a lead into itself (400) and unknown leads (404)', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('self') });
    const self = await api.post(`/api/leads/${lead.id}/merge`, { duplicateId: lead.id });
    expect(self.status).toBe(400);
    expect(self.body).toEqual({ error: 'A lead cannot be merged into itself' });
    const unknown = await api.post(`/api/leads/${lead.id}/merge`, { duplicateId: randomUUID() });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Duplicate lead not found' });
    const unknownPrimary = await api.post(`/api/leads/${randomUUID()}/merge`, { duplicateId: lead.id });
    expect(unknownPrimary.body).toEqual({ error: 'Lead not found' });
    expect((await api.post(`/api/leads/${lead.id}/merge`, {})).body).toEqual({
      error: 'duplicateId is required',
    });
  });
});

describe('delete', () => {
  it('deletes the lead and its timeline permanently (204), publishes lead.deleted', async () => {
    const email = uniqueEmail('delete');
    const lead = await captureLead(harness, { email });
    await api.put(`/api/leads/${lead.id}/status`, { status: 'closed' });
    const response = await api.delete(`/api/leads/${lead.id}`);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect((await api.get(`/api/leads/${lead.id}`)).status).toBe(404);
    expect((await api.get(`/api/leads/${lead.id}/events`)).status).toBe(404);
    expect(await harness.store.collection('lead_events').countDocuments({ leadId: lead.id })).toBe(0);
    expect((await api.delete(`/api/leads/${lead.id}`)).status).toBe(404);
    expect(
      harness.published.some(
        (event) => event.type === 'lead.deleted' && (event.data as { leadId: string }).leadId === lead.id,
      ),
    ).toBe(true);
    // Its e-mail is free again: the next lead with it is an original.
    expect(await captureLead(harness, { email })).toMatchObject({ isDuplicate: false });
  });

  it('makes the oldest duplicate the original when the original is deleted', async () => {
    const email = uniqueEmail('heir');
    const original = await captureLead(harness, { email });
    const heir = await captureLead(harness, { email });
    const younger = await captureLead(harness, { email });
    expect((await api.delete(`/api/leads/${original.id}`)).status).toBe(204);
    expect((await api.get(`/api/leads/${heir.id}`)).body).toMatchObject({
      isDuplicate: false,
      duplicateOf: null,
    });
    expect((await api.get(`/api/leads/${younger.id}`)).body).toMatchObject({
      isDuplicate: true,
      duplicateOf: heir.id,
    });
    expect(await captureLead(harness, { email })).toMatchObject({ duplicateOf: heir.id });
  });
});
