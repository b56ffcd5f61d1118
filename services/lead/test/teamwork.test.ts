import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_ID,
  type ApiLead,
  addUser as addHarnessUser,
  captureLead,
  client,
  type Harness,
  publish,
  startHarness,
  waitFor,
} from './harness.js';

interface BulkAnswer {
  action: string;
  succeeded: number;
  failed: number;
  results: { id: string; ok: boolean; status?: number; error?: string }[];
}

interface Note {
  id: string;
  text: string;
  createdAt: string;
  author: { userId: string | null; name: string | null; apiKeyId: string | null };
}

let harness: Harness;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  harness = await startHarness();
  api = client(harness);
});
afterAll(async () => harness.close());

function addUser(name: string): Promise<string> {
  return addHarnessUser(harness, { name });
}

async function leads(count: number, label: string): Promise<ApiLead[]> {
  const made: ApiLead[] = [];
  for (let i = 0; i < count; i++)
    made.push(await captureLead(harness, { email: `${label}${i}.${randomUUID().slice(0, 6)}@example.com` }));
  return made;
}

async function timelineTypes(leadId: string): Promise<string[]> {
  const body = (await api.get(`/api/leads/${leadId}/events`)).body as { data: { type: string }[] };
  return body.data.map((entry) => entry.type);
}

function updatesOf(leadId: string) {
  return harness.published.filter(
    (event) => event.type === 'lead.updated' && (event.data as { leadId: string }).leadId === leadId,
  );
}

describe('POST /api/leads/bulk', () => {
  it('assigns every lead as PUT .../assign does: a result per id, a timeline entry and lead.updated per lead', async () => {
    const rep = await addUser('Rep One');
    const [first, second] = await leads(2, 'bulkassign');
    const missing = randomUUID();
    const response = await api.post('/api/leads/bulk', {
      ids: [first!.id, missing, second!.id],
      action: { type: 'assign', userId: rep },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      action: 'assign',
      succeeded: 2,
      failed: 1,
      results: [
        { id: first!.id, ok: true },
        { id: missing, ok: false, status: 404, error: 'Lead not found' },
        { id: second!.id, ok: true },
      ],
    });
    await harness.drained();
    for (const lead of [first!, second!]) {
      expect((await api.get(`/api/leads/${lead.id}`)).body).toMatchObject({ assignedTo: rep });
      expect(await timelineTypes(lead.id)).toContain('assigned');
      expect(updatesOf(lead.id).map((event) => event.data)).toEqual([
        { leadId: lead.id, changes: { assignedTo: rep }, actor: { userId: ADMIN_ID } },
      ]);
    }
  });

  it('sets the status and moves to a stage; a lead already there is ok and writes nothing', async () => {
    const pipelineId = randomUUID();
    const stageId = randomUUID();
    await publish(harness.bus, 'pipeline.created', {
      pipelineId,
      name: 'Partners',
      isDefault: false,
      stages: [{ id: stageId, name: 'Demo', color: '#3366ff', order: 0, isWin: false, isLost: false }],
    });
    await waitFor('pipeline', () => harness.store.collection('lead_pipelines').findOne({ _id: pipelineId }));
    const [first, second] = await leads(2, 'bulkstage');
    await api.put(`/api/leads/${first!.id}/status`, { status: 'contacted' });
    const status = await api.post('/api/leads/bulk', {
      ids: [first!.id, second!.id],
      action: { type: 'status', status: 'contacted' },
    });
    expect(status.body).toMatchObject({ succeeded: 2, failed: 0 });
    expect((await timelineTypes(first!.id)).filter((type) => type === 'status_changed')).toHaveLength(1);
    expect((await timelineTypes(second!.id)).filter((type) => type === 'status_changed')).toHaveLength(1);

    const moved = await api.post('/api/leads/bulk', {
      ids: [first!.id, second!.id],
      action: { type: 'stage', stageId },
    });
    expect(moved.body).toMatchObject({ succeeded: 2 });
    for (const lead of [first!, second!]) {
      expect((await api.get(`/api/leads/${lead.id}`)).body).toMatchObject({
        pipeline: { id: pipelineId, name: 'Partners' },
        stage: { id: stageId, name: 'Demo' },
      });
    }
  });

  it('adds and removes tags by name on every lead', async () => {
    const [first, second] = await leads(2, 'bulktags');
    await api.post(`/api/leads/${first!.id}/tags`, { name: 'VIP' });
    const added = await api.post('/api/leads/bulk', {
      ids: [first!.id, second!.id],
      action: { type: 'addTags', tags: ['vip', 'Webinar'] },
    });
    expect(added.body).toMatchObject({ succeeded: 2, failed: 0 });
    const tagsOf = async (id: string) =>
      ((await api.get(`/api/leads/${id}`)).body as { tags: { name: string }[] }).tags.map((tag) => tag.name);
    expect(await tagsOf(first!.id)).toEqual(['VIP', 'Webinar']);
    expect(await tagsOf(second!.id)).toEqual(['VIP', 'Webinar']);

    await api.post(`/api/leads/${first!.id}/tags`, { name: 'Keep' });
    const removed = await api.post('/api/leads/bulk', {
      ids: [first!.id, second!.id],
      action: { type: 'removeTags', tags: ['VIP', 'webinar'] },
    });
    expect(removed.body).toMatchObject({ succeeded: 2, failed: 0 });
    expect(await tagsOf(first!.id)).toEqual(['Keep']);
    expect(await tagsOf(second!.id)).toEqual([]);
    expect(await timelineTypes(second!.id)).toEqual([
      'tag_removed',
      'tag_removed',
      'tag_added',
      'tag_added',
      'created',
    ]);
  });

  it('deletes with full scope (read-only: 403, nothing deleted), publishing lead.deleted per lead', async () => {
    const [first, second] = await leads(2, 'bulkdelete');
    const body = { ids: [first!.id, second!.id], action: { type: 'delete' } };
    const readOnly = await api.post('/api/leads/bulk', body, { scope: 'read' });
    expect(readOnly.status).toBe(403);
    expect((await api.get(`/api/leads/${first!.id}`)).status).toBe(200);

    // A member may delete, as with DELETE /api/leads/<id>.
    const member = await addUser('Member');
    const deleted = await api.post('/api/leads/bulk', body, { as: { userId: member, role: 'member' } });
    expect(deleted.body).toMatchObject({ action: 'delete', succeeded: 2, failed: 0 });
    await harness.drained();
    for (const lead of [first!, second!]) {
      expect((await api.get(`/api/leads/${lead.id}`)).status).toBe(404);
      expect(
        harness.published.filter(
          (event) => event.type === 'lead.deleted' && (event.data as { leadId: string }).leadId === lead.id,
        ),
      ).toHaveLength(1);
    }
    const again = (await api.post('/api/leads/bulk', body)).body as BulkAnswer;
    expect(again.results.map((result) => result.status)).toEqual([404, 404]);
  });

  it('refuses a malformed request or an action that fits no lead with 400, changing nothing', async () => {
    const [lead] = await leads(1, 'bulkbad');
    const id = lead!.id;
    const cases: [unknown, string][] = [
      [{ ids: [], action: { type: 'delete' } }, 'ids must have at least 1 item'],
      [
        { ids: Array.from({ length: 501 }, () => randomUUID()), action: { type: 'delete' } },
        'ids must have at most 500 items',
      ],
      [
        { ids: [id, id], action: { type: 'delete' } },
        'ids must NOT have duplicate items (items ## 1 and 0 are identical)',
      ],
      [{ ids: [id], action: { type: 'archive' } }, ''],
      [{ ids: [id], action: { type: 'assign' } }, 'action.userId is required for assign'],
      [{ ids: [id], action: { type: 'assign', userId: randomUUID() } }, ''],
      [{ ids: [id], action: { type: 'stage', stageId: randomUUID() } }, ''],
      [{ ids: [id], action: { type: 'removeTags', tags: ['never-made'] } }, 'Unknown tag: never-made'],
      [{ ids: [id], action: { type: 'addTags', tags: ['   '] } }, 'name must not be empty'],
    ];
    for (const [body, error] of cases) {
      const response = await api.post('/api/leads/bulk', body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      if (error) expect(response.body).toEqual({ error });
      else expect(response.body).toEqual({ error: expect.any(String) });
    }
    expect(await timelineTypes(id)).toEqual(['created']);
  });
});

describe('the notes history', () => {
  it('adds notes with author and time, lists them newest first, and leaves the contract notes field alone', async () => {
    const author = await addUser('Ada Author');
    const [lead] = await leads(1, 'notes');
    const id = lead!.id;
    await api.put(`/api/leads/${id}/notes`, { notes: 'Summary' });
    const first = await api.post(
      `/api/leads/${id}/notes`,
      { text: '  Called, no answer ' },
      { as: { userId: author } },
    );
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.any(String),
      text: 'Called, no answer',
      createdAt: expect.any(String),
      author: { userId: author, name: 'Ada Author', apiKeyId: null },
    });
    await api.post(`/api/leads/${id}/notes`, { text: 'Call back Friday' });
    const list = (await api.get(`/api/leads/${id}/notes`)).body as {
      data: Note[];
      pagination: { total: number };
    };
    expect(list.data.map((note) => [note.text, note.author.userId])).toEqual([
      ['Call back Friday', ADMIN_ID],
      ['Called, no answer', author],
    ]);
    expect(list.pagination.total).toBe(2);
    // The contract's field keeps its value and its own semantics.
    expect((await api.get(`/api/leads/${id}`)).body).toMatchObject({ notes: 'Summary' });
    expect((await timelineTypes(id)).slice(0, 3)).toEqual(['note_added', 'note_added', 'note_changed']);
    await harness.drained();
    expect(updatesOf(id).map((event) => (event.data as { changes: object }).changes)).toEqual([
      { notes: 'Summary' },
      { noteAdded: { id: (first.body as Note).id, text: 'Called, no answer' } },
      { noteAdded: { id: list.data[0]!.id, text: 'Call back Friday' } },
    ]);

    expect((await api.post(`/api/leads/${id}/notes`, { text: '  ' })).body).toEqual({
      error: 'text must not be empty',
    });
    expect((await api.post(`/api/leads/${id}/notes`, { text: 'x' }, { scope: 'read' })).status).toBe(403);
    expect((await api.post(`/api/leads/${randomUUID()}/notes`, { text: 'x' })).status).toBe(404);
    expect((await api.get(`/api/leads/${randomUUID()}/notes`)).status).toBe(404);
  });

  it('lets a note be deleted by its author or an admin only', async () => {
    const author = await addUser('Author');
    const other = await addUser('Other');
    const [lead] = await leads(1, 'notedelete');
    const id = lead!.id;
    const post = async () =>
      ((await api.post(`/api/leads/${id}/notes`, { text: 'mine' }, { as: { userId: author } })).body as Note)
        .id;
    const noteId = await post();
    const byOther = await api.delete(`/api/leads/${id}/notes/${noteId}`, {
      as: { userId: other, role: 'member' },
    });
    expect(byOther.status).toBe(403);
    expect(byOther.body).toEqual({ error: 'Only the author of a note or an admin can delete it' });
    expect((await api.delete(`/api/leads/${id}/notes/${noteId}`, { as: { userId: author } })).status).toBe(
      204,
    );
    expect((await api.delete(`/api/leads/${id}/notes/${noteId}`, { as: { userId: author } })).status).toBe(
      404,
    );
    const second = await post();
    expect((await api.delete(`/api/leads/${id}/notes/${second}`)).status).toBe(204); // the harness's admin
    expect(((await api.get(`/api/leads/${id}/notes`)).body as { data: Note[] }).data).toEqual([]);
    expect((await timelineTypes(id)).filter((type) => type === 'note_deleted')).toHaveLength(2);
  });

  it('moves notes to the primary on merge and deletes them with the lead', async () => {
    const [primary, duplicate] = await leads(2, 'notemerge');
    await api.post(`/api/leads/${duplicate!.id}/notes`, { text: 'from the duplicate' });
    await api.post(`/api/leads/${primary!.id}/merge`, { duplicateId: duplicate!.id });
    const notes = ((await api.get(`/api/leads/${primary!.id}/notes`)).body as { data: Note[] }).data;
    expect(notes.map((note) => note.text)).toEqual(['from the duplicate']);
    await api.delete(`/api/leads/${primary!.id}`);
    expect(await harness.store.collection('lead_notes').countDocuments({ leadId: primary!.id })).toBe(0);
  });
});
