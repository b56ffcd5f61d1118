import { randomUUID } from 'node:crypto';
import { LEAD_STATUSES } from '@lead-capture/contracts';
import { describe, expect, it } from 'vitest';
import { addUser, api, DETAIL_FIELDS, harness, timeline, uniqueEmail, useLeadApi } from './api-fixtures.js';
import { ADMIN_ID, captureLead, publish, waitFor } from './harness.js';

useLeadApi({ config: { DEFAULT_PHONE_REGION: 'US' } });

describe('one lead', () => {
  it('shows the full detail', async () => {
    const lead = await captureLead(harness, {
      email: uniqueEmail('detail'),
      firstName: ' Ada ',
      lastName: 'Lovelace',
      phone: '(415) 555-0199',
    });
    const response = await api.get(`/api/leads/${lead.id}`);
    expect(response.status).toBe(200);
    const detail = response.body as Record<string, unknown>;
    expect(Object.keys(detail).sort()).toEqual(DETAIL_FIELDS);
    expect(detail).toMatchObject({
      firstName: 'Ada',
      phone: '+14155550199',
      phoneOriginal: '(415) 555-0199',
      notes: null,
      tags: [],
      customFields: { budget: '10k' },
      attribution: { utm: { utm_source: 'newsletter' }, referrer: 'https://example.org/' },
      client: { ip: '203.0.113.7', userAgent: 'curl/8.0' },
      enrichment: null,
      qualification: null,
      scoreReasons: [],
      isDuplicate: false,
      duplicateOf: null,
      pipeline: null,
      stage: null,
      notifications: [],
      enrollments: [],
    });
  });

  it('answers 404 "Lead not found" for an unknown or malformed id, and for the literal import', async () => {
    for (const id of [randomUUID(), 'not-a-uuid', 'import']) {
      for (const suffix of ['', '/events', '/duplicates']) {
        const response = await api.get(`/api/leads/${id}${suffix}`);
        expect(response.status, `${id}${suffix}`).toBe(404);
        expect(response.body).toEqual({ error: 'Lead not found' });
      }
    }
    expect((await api.put(`/api/leads/${randomUUID()}/status`, { status: 'new' })).status).toBe(404);
    expect((await api.delete(`/api/leads/${randomUUID()}`)).status).toBe(404);
  });

  it('needs an identity (401), and full scope to change anything (403)', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('scope') });
    const anonymous = await api.get('/api/leads', { scope: 'none' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ error: 'Missing internal identity' });
    const readOnly = { scope: 'read' as const };
    expect((await api.get(`/api/leads/${lead.id}`, readOnly)).status).toBe(200);
    const writes = [
      () => api.put(`/api/leads/${lead.id}/status`, { status: 'closed' }, readOnly),
      () => api.put(`/api/leads/${lead.id}/notes`, { notes: 'x' }, readOnly),
      () => api.post(`/api/leads/${lead.id}/tags`, { name: 'x' }, readOnly),
      () => api.put(`/api/leads/${lead.id}/assign`, { userId: null }, readOnly),
      () => api.post(`/api/leads/${lead.id}/merge`, { duplicateId: randomUUID() }, readOnly),
      () => api.delete(`/api/leads/${lead.id}`, readOnly),
    ];
    for (const write of writes) {
      const response = await write();
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        error: 'This API key is read-only; this operation needs a key with full scope',
      });
    }
    expect((await api.get(`/api/leads/${lead.id}`)).body).toMatchObject({ status: 'new' });
  });
});

describe('status', () => {
  it('moves to any status, writes status_changed {from, to} and publishes lead.updated', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('status') });
    const response = await api.put(`/api/leads/${lead.id}/status`, { status: 'converted' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: lead.id, status: 'converted' });
    expect(Object.keys(response.body as object).sort()).toEqual(DETAIL_FIELDS);
    expect((await api.put(`/api/leads/${lead.id}/status`, { status: 'new' })).status).toBe(200);
    const changes = (await timeline(lead.id)).filter((entry) => entry.type === 'status_changed');
    expect(changes.map((entry) => entry.data)).toEqual([
      { from: 'converted', to: 'new' },
      { from: 'new', to: 'converted' },
    ]);
    expect(changes[0]!.actor).toEqual({ userId: ADMIN_ID });
    const updates = harness.published.filter(
      (event) => event.type === 'lead.updated' && (event.data as { leadId: string }).leadId === lead.id,
    );
    expect(updates.map((event) => event.data)).toEqual([
      { leadId: lead.id, changes: { status: 'converted' }, actor: { userId: ADMIN_ID } },
      { leadId: lead.id, changes: { status: 'new' }, actor: { userId: ADMIN_ID } },
    ]);
  });

  it('treats the same status as a no-op: 200, no timeline entry', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('same') });
    const response = await api.put(`/api/leads/${lead.id}/status`, { status: 'new' });
    expect(response.status).toBe(200);
    expect((await timeline(lead.id)).map((entry) => entry.type)).toEqual(['created']);
  });

  it('refuses an unknown or missing status with 400', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('badstatus') });
    expect((await api.put(`/api/leads/${lead.id}/status`, { status: 'won' })).body).toEqual({
      error: `status must be one of: ${LEAD_STATUSES.join(', ')}`,
    });
    expect((await api.put(`/api/leads/${lead.id}/status`, {})).body).toEqual({ error: 'status is required' });
  });
});

describe('notes', () => {
  it('sets, replaces and clears the notes; each change on the timeline', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('notes') });
    expect((await api.put(`/api/leads/${lead.id}/notes`, { notes: 'Called, no answer' })).body).toMatchObject(
      {
        notes: 'Called, no answer',
      },
    );
    expect((await api.put(`/api/leads/${lead.id}/notes`, { notes: 'Call back Friday' })).body).toMatchObject({
      notes: 'Call back Friday',
    });
    expect((await api.put(`/api/leads/${lead.id}/notes`, { notes: '' })).body).toMatchObject({ notes: null });
    const entries = (await timeline(lead.id)).filter((entry) => entry.type === 'note_changed');
    expect(entries.map((entry) => entry.data.notes)).toEqual([null, 'Call back Friday', 'Called, no answer']);
  });

  it('takes up to 10,000 characters', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('longnotes') });
    expect((await api.put(`/api/leads/${lead.id}/notes`, { notes: 'n'.repeat(10_000) })).status).toBe(200);
    const tooLong = await api.put(`/api/leads/${lead.id}/notes`, { notes: 'n'.repeat(10_001) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual({ error: 'notes must be at most 10000 characters long' });
    // JSON bodies are not coerced: a number is not notes.
    expect((await api.put(`/api/leads/${lead.id}/notes`, { notes: 5 })).body).toEqual({
      error: 'notes must be a string',
    });
    expect((await api.put(`/api/leads/${lead.id}/notes`, {})).body).toEqual({ error: 'notes is required' });
  });
});

describe('tags', () => {
  it('adds workspace tags by name (201), once per lead (200 the second time), and removes them (204)', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('tags') });
    const other = await captureLead(harness, { email: uniqueEmail('tags2') });
    const added = await api.post(`/api/leads/${lead.id}/tags`, { name: '  VIP ' });
    expect(added.status).toBe(201);
    const tag = added.body as { id: string; name: string };
    expect(tag).toEqual({ id: expect.any(String), name: 'VIP' });
    const again = await api.post(`/api/leads/${lead.id}/tags`, { name: 'vip' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(tag);
    expect((await api.post(`/api/leads/${other.id}/tags`, { name: 'Vip' })).body).toEqual(tag);
    await api.post(`/api/leads/${lead.id}/tags`, { name: 'Webinar 2024' });
    const detail = (await api.get(`/api/leads/${lead.id}`)).body as { tags: { id: string; name: string }[] };
    expect(detail.tags.map((item) => item.name)).toEqual(['VIP', 'Webinar 2024']);

    const removed = await api.delete(`/api/leads/${lead.id}/tags/${tag.id}`);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    const missing = await api.delete(`/api/leads/${lead.id}/tags/${tag.id}`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'Tag not found on this lead' });
    expect((await api.delete(`/api/leads/${lead.id}/tags/not-a-tag`)).status).toBe(404);
    expect(((await api.get(`/api/leads/${other.id}`)).body as { tags: unknown[] }).tags).toEqual([tag]);
    const types = (await timeline(lead.id)).map((entry) => [entry.type, entry.data.name]);
    expect(types.slice(0, 3)).toEqual([
      ['tag_removed', 'VIP'],
      ['tag_added', 'Webinar 2024'],
      ['tag_added', 'VIP'],
    ]);
  });

  it('wants a name of 1 to 50 showable characters after trimming', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('badtags') });
    for (const [name, error] of [
      ['', 'name must not be empty'],
      ['   ', 'name must not be empty'],
      ['x'.repeat(51), 'name must be at most 50 characters long'],
      ['VIP\u0000', 'name must not contain control or text-direction characters (U+0000)'],
      ['\u202Egnp.exe', 'name must not contain control or text-direction characters (U+202E)'],
    ]) {
      const response = await api.post(`/api/leads/${lead.id}/tags`, { name });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error });
    }
    expect((await api.post(`/api/leads/${lead.id}/tags`, { name: ` ${'x'.repeat(50)} ` })).status).toBe(201);
  });
});

describe('assignment', () => {
  it('assigns to an active user, reassigns, unassigns with null; each change on the timeline', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('assign') });
    const first = await addUser();
    const second = await addUser();
    expect((await api.put(`/api/leads/${lead.id}/assign`, { userId: first })).body).toMatchObject({
      assignedTo: first,
    });
    expect((await api.put(`/api/leads/${lead.id}/assign`, { userId: second })).body).toMatchObject({
      assignedTo: second,
    });
    expect((await api.put(`/api/leads/${lead.id}/assign`, { userId: null })).body).toMatchObject({
      assignedTo: null,
    });
    const entries = (await timeline(lead.id)).filter((entry) => entry.type === 'assigned');
    expect(entries.map((entry) => entry.data)).toEqual([
      { from: second, to: null },
      { from: first, to: second },
      { from: null, to: first },
    ]);
  });

  it('refuses an unknown, inactive or malformed user with 400 "Unknown user: <id>"', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('badassign') });
    const inactive = await addUser(false);
    for (const userId of [randomUUID(), inactive, 'bob']) {
      const response = await api.put(`/api/leads/${lead.id}/assign`, { userId });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: `Unknown user: ${userId}` });
    }
    expect((await api.put(`/api/leads/${lead.id}/assign`, {})).body).toEqual({ error: 'userId is required' });
  });
});

describe('stage', () => {
  it('moves the lead to a stage of a known pipeline, by id; unknown stages are 400', async () => {
    const pipelineId = randomUUID();
    const stages = [
      { id: randomUUID(), name: 'New', color: '#cccccc', order: 0, isWin: false, isLost: false },
      { id: randomUUID(), name: 'Demo', color: '#3366ff', order: 1, isWin: false, isLost: false },
    ];
    await publish(harness.bus, 'pipeline.created', {
      pipelineId,
      name: 'Enterprise',
      isDefault: false,
      stages,
    });
    await waitFor('pipeline', () => harness.store.collection('lead_pipelines').findOne({ _id: pipelineId }));
    const lead = await captureLead(harness, { email: uniqueEmail('stage') });
    const moved = await api.put(`/api/leads/${lead.id}/stage`, { stageId: stages[1]!.id });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      pipeline: { id: pipelineId, name: 'Enterprise' },
      stage: { id: stages[1]!.id, name: 'Demo' },
    });
    const entry = (await timeline(lead.id)).find((item) => item.type === 'stage_changed');
    expect(entry?.data).toEqual({
      from: { pipelineId: null, stageId: null },
      to: { pipelineId, stageId: stages[1]!.id },
    });
    const unknown = randomUUID();
    expect((await api.put(`/api/leads/${lead.id}/stage`, { stageId: unknown })).body).toEqual({
      error: `Unknown stage: ${unknown}`,
    });
    expect((await api.put(`/api/leads/${lead.id}/stage`, { stageId: 'demo' })).body).toEqual({
      error: 'stageId must be a valid UUID',
    });
  });
});
