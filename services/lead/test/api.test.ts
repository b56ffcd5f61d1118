import { randomUUID } from 'node:crypto';
import { LEAD_STATUSES } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
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

const LIST_FIELDS = [
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

const DETAIL_FIELDS = [
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

interface TimelineEntry {
  id: string;
  type: string;
  occurredAt: string;
  actor: Record<string, string> | null;
  data: Record<string, unknown>;
}

interface ListBody {
  data: ApiLead[];
  pagination: { page: number; limit: number; total: number; pages: number };
}

let harness: Harness;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  harness = await startHarness({ config: { DEFAULT_PHONE_REGION: 'US' } });
  api = client(harness);
});
afterAll(async () => harness.close());

async function timeline(leadId: string): Promise<TimelineEntry[]> {
  const response = await api.get(`/api/leads/${leadId}/events`);
  expect(response.status).toBe(200);
  return (response.body as { data: TimelineEntry[] }).data;
}

function addUser(active = true): Promise<string> {
  return addHarnessUser(harness, { active });
}

function uniqueEmail(label: string): string {
  return `${label}.${randomUUID().slice(0, 8)}@example.com`;
}

describe('the list', () => {
  let listHarness: Harness;
  let listApi: ReturnType<typeof client>;
  const leads: ApiLead[] = [];
  const otherSource = randomUUID();

  beforeAll(async () => {
    listHarness = await startHarness({ config: { DEFAULT_PHONE_REGION: 'US' } });
    listApi = client(listHarness);
    leads.push(
      await captureLead(listHarness, {
        firstName: 'Jane',
        lastName: 'Doe',
        email: 'jane.doe@acme.test',
        phone: '+1 415 555 0100',
        company: 'Acme',
      }),
    );
    leads.push(
      await captureLead(listHarness, { firstName: 'John', lastName: 'Smith', email: 'john@globex.test' }),
    );
    leads.push(
      await captureLead(listHarness, {
        firstName: 'Regex',
        company: 'a.*b(c[d',
        email: 'regex@initech.test',
      }),
    );
    leads.push(
      await captureLead(
        listHarness,
        { firstName: 'Jane', lastName: 'Again', email: 'jane.doe@acme.test' },
        { sourceId: otherSource, sourceName: 'Partner list' },
      ),
    );
    for (let i = 0; i < 21; i++) {
      leads.push(await captureLead(listHarness, { email: `bulk${i}@bulk.test`, firstName: `Bulk${i}` }));
    }
  });
  afterAll(async () => listHarness.close());

  async function list(query: string): Promise<ListBody> {
    const response = await listApi.get(`/api/leads${query}`);
    expect(response.status, response.text).toBe(200);
    return response.body as ListBody;
  }

  it('answers {data, pagination} with the contract fields, newest first, 20 per page by default', async () => {
    const body = await list('');
    expect(Object.keys(body).sort()).toEqual(['data', 'pagination']);
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 25, pages: 2 });
    expect(body.data).toHaveLength(20);
    expect(Object.keys(body.data[0]!).sort()).toEqual(LIST_FIELDS);
    expect(Object.keys(body.data[0]!.source).sort()).toEqual(['deleted', 'id', 'name']);
    const created = body.data.map((lead) => lead.createdAt);
    expect(created).toEqual([...created].sort().reverse());
    expect(body.data[0]!.id).toBe(leads.at(-1)!.id);
    const jane = leads[0]!;
    expect(jane).toMatchObject({
      firstName: 'Jane',
      lastName: 'Doe',
      email: 'jane.doe@acme.test',
      phone: '+14155550100',
      company: 'Acme',
      status: 'new',
      score: 0,
      assignedTo: null,
      source: { id: SAMPLE_EVENT_DATA['lead.received'].sourceId, name: 'Website form', deleted: false },
    });
    expect(jane.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('paginates: total counts all matches, pages = ceil(total / limit), past the end is empty', async () => {
    expect((await list('?limit=10')).pagination).toEqual({ page: 1, limit: 10, total: 25, pages: 3 });
    const last = await list('?limit=10&page=3');
    expect(last.data).toHaveLength(5);
    // The highest page there is: an empty page, not a skip the store cannot take.
    expect((await list('?limit=100&page=90071992547409')).data).toEqual([]);
    const beyond = await list('?limit=10&page=4');
    expect(beyond.data).toEqual([]);
    expect(beyond.pagination).toEqual({ page: 4, limit: 10, total: 25, pages: 3 });
    const pages = [await list('?limit=10&page=1'), await list('?limit=10&page=2'), last];
    const ids = pages.flatMap((page) => page.data.map((lead) => lead.id));
    expect(new Set(ids).size).toBe(25);
    expect((await list('?status=closed')).pagination).toEqual({ page: 1, limit: 20, total: 0, pages: 0 });
    expect((await list('?limit=100')).data).toHaveLength(25);
  });

  it.each([
    ['?page=0', 'page must be >= 1'],
    ['?page=1.5', 'page must be an integer'],
    ['?page=x', 'page must be an integer'],
    ['?limit=0', 'limit must be >= 1'],
    ['?limit=101', 'limit must be <= 100'],
    ['?limit=1e400', 'limit must be a finite number'],
    ['?limit=Infinity', 'limit must be a finite number'],
    ['?limit=NaN', 'limit must be an integer'],
    ['?limit=-1e400', 'limit must be a finite number'],
    ['?page=1e400', 'page must be a finite number'],
    ['?page=Infinity', 'page must be a finite number'],
    ['?page=NaN', 'page must be an integer'],
    ['?page=-1e400', 'page must be a finite number'],
    ['?page=9007199254740993', 'page must be <= 90071992547409'],
    ['?status=won', 'status must be one of: new, contacted, qualified, converted, closed'],
    ['?sourceId=abc', 'sourceId must be a valid UUID'],
    [`?search=${'x'.repeat(201)}`, 'search must be at most 200 characters long'],
    [
      '?startDate=yesterday',
      'startDate must be an ISO 8601 date (2024-03-01) or date-time with a zone (2024-03-01T09:30:00Z)',
    ],
    [
      '?endDate=2024-02-30',
      'endDate must be an ISO 8601 date (2024-03-01) or date-time with a zone (2024-03-01T09:30:00Z)',
    ],
    ['?startDate=2024-03-02&endDate=2024-03-01', 'startDate must not be after endDate'],
    ['?assignedTo=bob', 'assignedTo must be a user id (UUID) or "unassigned"'],
    ['?duplicates=yes', 'duplicates must be one of: only, exclude'],
    ['?qualification=lukewarm', 'qualification must be one of: hot, warm, cold'],
    ['?tag=', 'tag must not be empty'],
    ['?tag=%20%20', 'tag must be a tag id or a tag name'],
    [`?tag=${'t'.repeat(201)}`, 'tag must be at most 200 characters long'],
    ['?sort=name', 'sort must be one of: createdAt, -createdAt, score, -score'],
    ['?pipelineId=sales', 'pipelineId must be a valid UUID'],
    [`?pipelineId=${randomUUID()}x`, 'pipelineId must be a valid UUID'],
    ['?colour=red', 'colour is not an allowed field'],
    ['?status=new&status=closed', 'status must be a string'],
  ])('refuses %s with 400 and a readable message', async (query, message) => {
    const response = await listApi.get(`/api/leads${query}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: message });
  });

  it('filters by status and source', async () => {
    const contacted = leads[1]!;
    expect((await listApi.put(`/api/leads/${contacted.id}/status`, { status: 'contacted' })).status).toBe(
      200,
    );
    const byStatus = await list('?status=contacted');
    expect(byStatus.data.map((lead) => lead.id)).toEqual([contacted.id]);
    const bySource = await list(`?sourceId=${otherSource}`);
    expect(bySource.data.map((lead) => lead.id)).toEqual([leads[3]!.id]);
    expect(bySource.data[0]!.source).toEqual({ id: otherSource, name: 'Partner list', deleted: false });
  });

  it('searches first name, last name, full name, e-mail, company and phone digits, case-insensitively', async () => {
    const ids = async (search: string) =>
      (await list(`?search=${encodeURIComponent(search)}`)).data.map((lead) => lead.id).sort();
    const [jane, john, , janeAgain] = leads;
    expect(await ids('SMITH')).toEqual([john!.id]);
    expect(await ids('jane doe')).toEqual([jane!.id]);
    expect(await ids('  Jane   Doe ')).toEqual([jane!.id]);
    expect(await ids('jane')).toEqual([jane!.id, janeAgain!.id].sort());
    expect(await ids('@globex')).toEqual([john!.id]);
    expect(await ids('acme')).toEqual([jane!.id, janeAgain!.id].sort());
    expect(await ids('+1 (415) 555')).toEqual([jane!.id]);
    expect(await ids('415-555-0100')).toEqual([jane!.id]);
    expect(await ids('nobody')).toEqual([]);
  });

  it('matches search text literally: regex characters are not a pattern', async () => {
    const regex = leads[2]!.id;
    for (const search of ['.*', 'a.*b', '(', '[', 'b(c[d']) {
      const found = (await list(`?search=${encodeURIComponent(search)}`)).data.map((lead) => lead.id);
      expect(found, search).toEqual([regex]);
    }
    expect((await list(`?search=${encodeURIComponent('^j')}`)).data).toEqual([]);
  });

  it('filters duplicates: only, or exclude', async () => {
    const only = await list('?duplicates=only');
    expect(only.data.map((lead) => lead.id)).toEqual([leads[3]!.id]);
    expect(only.data[0]).toMatchObject({ isDuplicate: true, duplicateOf: leads[0]!.id });
    const without = await list('?duplicates=exclude&limit=100');
    expect(without.pagination.total).toBe(24);
    expect(without.data.some((lead) => lead.isDuplicate)).toBe(false);
  });

  it('filters by assignee, and by "unassigned"', async () => {
    const userId = await addUserTo(listHarness);
    const target = leads[4]!;
    expect((await listApi.put(`/api/leads/${target.id}/assign`, { userId })).status).toBe(200);
    expect((await list(`?assignedTo=${userId}`)).data.map((lead) => lead.id)).toEqual([target.id]);
    const unassigned = await list('?assignedTo=unassigned&limit=100');
    expect(unassigned.pagination.total).toBe(24);
    expect(unassigned.data.map((lead) => lead.id)).not.toContain(target.id);
  });

  it('filters by creation date: startDate and endDate inclusive, a bare endDate covers its whole day', async () => {
    const collection = listHarness.store.collection('lead_leads');
    const times = ['2024-03-01T00:00:00.000Z', '2024-03-02T23:59:59.999Z', '2024-03-03T00:00:00.000Z'];
    const dated = leads.slice(5, 8);
    for (const [i, lead] of dated.entries()) {
      await collection.updateOne({ _id: lead.id }, { $set: { createdAt: times[i] } });
    }
    const ids = async (query: string) => (await list(query)).data.map((lead) => lead.id);
    expect(await ids('?startDate=2024-03-01&endDate=2024-03-02')).toEqual([dated[1]!.id, dated[0]!.id]);
    expect(await ids('?startDate=2024-03-02&endDate=2024-03-03')).toEqual([dated[2]!.id, dated[1]!.id]);
    expect(await ids('?endDate=2024-03-02T23:59:59.999Z')).toEqual([dated[1]!.id, dated[0]!.id]);
    expect(await ids('?startDate=2024-03-02T12:00:00%2B02:00&endDate=2024-03-02')).toEqual([dated[1]!.id]);
    expect(await ids('?endDate=2024-02-29')).toEqual([]);
    expect((await list('?startDate=2024-03-04')).pagination.total).toBe(22);
  });

  it('filters by qualification (an extension of the contract)', async () => {
    const collection = listHarness.store.collection('lead_leads');
    const [hot, warm] = [leads[12]!, leads[13]!];
    await collection.updateOne({ _id: hot.id }, { $set: { qualification: 'hot' } });
    await collection.updateOne({ _id: warm.id }, { $set: { qualification: 'warm' } });
    const ids = async (query: string) => (await list(query)).data.map((lead) => lead.id);
    expect(await ids('?qualification=hot')).toEqual([hot.id]);
    expect(await ids('?qualification=warm&status=new')).toEqual([warm.id]);
    expect(await ids('?qualification=cold')).toEqual([]);
    expect((await list('?qualification=hot')).data[0]).toMatchObject({ id: hot.id, qualification: 'hot' });
  });

  it('filters by tag, given by id or by name in any case (an extension of the contract)', async () => {
    const [first, second] = [leads[14]!, leads[15]!];
    const added = await listApi.post(`/api/leads/${first.id}/tags`, { name: 'Webinar 2024' });
    expect(added.status).toBe(201);
    const tagId = (added.body as { id: string }).id;
    expect((await listApi.post(`/api/leads/${second.id}/tags`, { name: 'webinar 2024' })).status).toBe(201);
    expect((await listApi.post(`/api/leads/${second.id}/tags`, { name: 'vip' })).status).toBe(201);
    const ids = async (query: string) => (await list(query)).data.map((lead) => lead.id).sort();
    const both = [first.id, second.id].sort();
    expect(await ids(`?tag=${tagId}`)).toEqual(both);
    expect(await ids(`?tag=${tagId.toUpperCase()}`)).toEqual(both);
    expect(await ids('?tag=WEBINAR%202024')).toEqual(both);
    expect(await ids('?tag=%20vip%20')).toEqual([second.id]);
    expect(await ids(`?tag=vip&search=${encodeURIComponent(first.email!)}`)).toEqual([]);
    const unknown = await list('?tag=nobody-has-this');
    expect(unknown).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } });
    expect((await list(`?tag=${randomUUID()}`)).pagination.total).toBe(0);
  });

  it('sorts by score or creation time, either way', async () => {
    const collection = listHarness.store.collection('lead_leads');
    await collection.updateOne({ _id: leads[10]!.id }, { $set: { score: 90 } });
    await collection.updateOne({ _id: leads[11]!.id }, { $set: { score: 40 } });
    const byScore = await list('?sort=-score&limit=2');
    expect(byScore.data.map((lead) => [lead.id, lead.score])).toEqual([
      [leads[10]!.id, 90],
      [leads[11]!.id, 40],
    ]);
    const lowest = await list('?sort=score&limit=100');
    expect(lowest.data.at(-1)!.id).toBe(leads[10]!.id);
    const oldest = await list('?sort=createdAt&limit=1');
    expect(oldest.data[0]!.createdAt <= leads[0]!.createdAt).toBe(true);
  });

  // Last in this block: a default pipeline places every lead of the list in its first stage.
  it("carries each lead's pipeline and stage, and filters by pipelineId (extensions of the contract)", async () => {
    const unplaced = await list('?limit=1');
    expect(unplaced.data[0]).toMatchObject({ pipeline: null, stage: null });

    const sales = { id: randomUUID(), stages: [randomUUID(), randomUUID()] };
    const partners = { id: randomUUID(), stages: [randomUUID()] };
    const stage = (id: string, name: string, order: number) => ({
      id,
      name,
      color: '#3366ff',
      order,
      isWin: false,
      isLost: false,
    });
    await publish(listHarness.bus, 'pipeline.created', {
      pipelineId: sales.id,
      name: 'Sales',
      isDefault: true,
      stages: [stage(sales.stages[0]!, 'New', 0), stage(sales.stages[1]!, 'Demo', 1)],
    });
    await publish(listHarness.bus, 'pipeline.created', {
      pipelineId: partners.id,
      name: 'Partners',
      isDefault: false,
      stages: [stage(partners.stages[0]!, 'Intro', 0)],
    });
    // The default pipeline takes in the leads that were in none.
    await waitFor(
      'the leads placed in the default pipeline',
      async () => (await list(`?pipelineId=${sales.id}`)).pagination.total === leads.length,
    );
    const [moved, demo, duplicate] = [leads[16]!, leads[17]!, leads[3]!];
    expect(duplicate.isDuplicate).toBe(true);
    expect((await listApi.put(`/api/leads/${moved.id}/stage`, { stageId: partners.stages[0] })).status).toBe(
      200,
    );
    expect((await listApi.put(`/api/leads/${demo.id}/stage`, { stageId: sales.stages[1] })).status).toBe(200);

    const inPartners = await list(`?pipelineId=${partners.id}`);
    expect(inPartners.data.map((lead) => lead.id)).toEqual([moved.id]);
    expect(inPartners.data[0]).toMatchObject({
      pipeline: { id: partners.id, name: 'Partners' },
      stage: { id: partners.stages[0], name: 'Intro' },
    });
    // The list item says what the detail says.
    const detail = (await listApi.get(`/api/leads/${demo.id}`)).body as ApiLead;
    const listed = (await list(`?pipelineId=${sales.id}&limit=100`)).data.find((lead) => lead.id === demo.id);
    expect(listed).toMatchObject({ pipeline: detail.pipeline, stage: detail.stage });
    expect(detail).toMatchObject({
      pipeline: { id: sales.id, name: 'Sales' },
      stage: { id: sales.stages[1], name: 'Demo' },
    });

    expect((await list(`?pipelineId=${sales.id}`)).pagination.total).toBe(leads.length - 1);
    // With the other filters: the board's query (a pipeline's leads, duplicates aside).
    const board = await list(`?pipelineId=${sales.id}&duplicates=exclude&limit=100`);
    expect(board.pagination.total).toBe(leads.length - 2);
    expect(board.data.map((lead) => lead.id)).not.toContain(duplicate.id);
    expect(board.data.every((lead) => lead.pipeline?.id === sales.id && lead.stage !== null)).toBe(true);
    // A board column (stageId): the count of that stage alone, paged like any list.
    const firstStage = await list(
      `?pipelineId=${sales.id}&stageId=${sales.stages[0]}&duplicates=exclude&limit=5`,
    );
    expect(firstStage.pagination.total).toBe(leads.length - 3);
    expect(firstStage.data).toHaveLength(5);
    expect(firstStage.data.every((lead) => lead.stage?.id === sales.stages[0])).toBe(true);
    const demoStage = await list(`?stageId=${sales.stages[1]!.toUpperCase()}&duplicates=exclude`);
    expect(demoStage.data.map((lead) => lead.id)).toEqual([demo.id]);
    expect(demoStage.pagination.total).toBe(1);
    expect((await list(`?pipelineId=${partners.id}&stageId=${sales.stages[1]}`)).pagination.total).toBe(0);
    expect((await listApi.get('/api/leads?stageId=demo')).body).toEqual({
      error: 'stageId must be a valid UUID',
    });
    expect((await list(`?pipelineId=${sales.id.toUpperCase()}&status=closed`)).pagination.total).toBe(0);
    expect((await list(`?pipelineId=${partners.id.toUpperCase()}`)).pagination.total).toBe(1);
    expect(await list(`?pipelineId=${randomUUID()}`)).toEqual({
      data: [],
      pagination: { page: 1, limit: 20, total: 0, pages: 0 },
    });

    // The export takes the same filter, validated the same way.
    const exported = await listApi.get(`/api/leads/export?pipelineId=${partners.id}`);
    expect(exported.status).toBe(200);
    expect(exported.text.startsWith('\uFEFFid,')).toBe(true);
    const rows = exported.text.slice(1).trimEnd().split('\r\n');
    expect(rows.map((row) => row.split(',')[0])).toEqual(['id', moved.id]);
    const malformed = await listApi.get('/api/leads/export?pipelineId=partners');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ error: 'pipelineId must be a valid UUID' });

    // A renamed stage shows its new name in the list at once.
    await publish(listHarness.bus, 'pipeline.updated', {
      pipelineId: partners.id,
      name: 'Partner deals',
      isDefault: false,
      stages: [stage(partners.stages[0]!, 'First call', 0)],
      revision: 2,
    });
    const renamed = await waitFor('the renamed stage listed', async () => {
      const [lead] = (await list(`?pipelineId=${partners.id}`)).data;
      return lead?.stage?.name === 'First call' ? lead : undefined;
    });
    expect(renamed.pipeline).toEqual({ id: partners.id, name: 'Partner deals' });
  });
});

async function addUserTo(target: Harness): Promise<string> {
  const userId = randomUUID();
  await publish(target.bus, 'user.created', {
    userId,
    email: `${userId.slice(0, 8)}@example.com`,
    name: 'Rep',
    role: 'member',
    active: true,
  });
  await waitFor('user read model', () => target.store.collection('lead_users').findOne({ _id: userId }));
  return userId;
}

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

  it('wants a name of 1 to 50 characters after trimming', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('badtags') });
    for (const [name, error] of [
      ['', 'name must not be empty'],
      ['   ', 'name must not be empty'],
      ['x'.repeat(51), 'name must be at most 50 characters long'],
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

describe('stats', () => {
  const DAY_MS = 24 * 3600 * 1000;
  const ZERO_QUALIFICATIONS = { hot: 0, warm: 0, cold: 0 };

  let statsHarness: Harness;
  let statsApi: ReturnType<typeof client>;
  beforeAll(async () => {
    statsHarness = await startHarness();
    statsApi = client(statsHarness);
  });
  afterAll(async () => statsHarness.close());

  interface Stats {
    total: number;
    byStatus: Record<string, number>;
    byQualification: Record<string, number>;
    bySource: Array<{ id: string; name: string; deleted: boolean; count: number }>;
    perDay: Array<{ date: string; count: number }>;
  }

  /** The UTC day `offset` days from today (negative: before), as YYYY-MM-DD. */
  function utcDay(offset: number, now = Date.now()): string {
    return new Date(now + offset * DAY_MS).toISOString().slice(0, 10);
  }

  /** GET /api/leads/stats and the UTC day it was answered on (asked again if midnight passed meanwhile). */
  async function stats(query = ''): Promise<{ body: Stats; today: string }> {
    for (;;) {
      const today = utcDay(0);
      const response = await statsApi.get(`/api/leads/stats${query}`);
      expect(response.status, response.text).toBe(200);
      if (utcDay(0) === today) return { body: response.body as Stats, today };
    }
  }

  it('counts all leads and each of the five statuses and three qualifications, zeros included', async () => {
    const { body: empty, today } = await stats();
    expect(Object.keys(empty).sort()).toEqual(['byQualification', 'bySource', 'byStatus', 'perDay', 'total']);
    expect(empty).toMatchObject({
      total: 0,
      byStatus: { new: 0, contacted: 0, qualified: 0, converted: 0, closed: 0 },
      byQualification: ZERO_QUALIFICATIONS,
      bySource: [],
    });
    // The last 30 UTC days, oldest first, today last, every one of them with its zero.
    expect(empty.perDay).toHaveLength(30);
    expect(empty.perDay.at(-1)).toEqual({ date: today, count: 0 });
    expect(empty.perDay[0]).toEqual({ date: utcDay(-29, Date.parse(today)), count: 0 });
    expect(empty.perDay.every((day) => day.count === 0)).toBe(true);
    const dates = empty.perDay.map((day) => day.date);
    expect(dates).toEqual([...dates].sort());
    expect(new Set(dates).size).toBe(30);

    const a = await captureLead(statsHarness, { email: 'a@stats.test' });
    await captureLead(statsHarness, { email: 'b@stats.test' });
    const c = await captureLead(statsHarness, { email: 'c@stats.test' });
    await statsApi.put(`/api/leads/${a.id}/status`, { status: 'qualified' });
    await statsApi.put(`/api/leads/${c.id}/status`, { status: 'closed' });
    const leads = statsHarness.store.collection('lead_leads');
    await leads.updateOne({ _id: a.id }, { $set: { qualification: 'hot' } });
    await leads.updateOne({ _id: c.id }, { $set: { qualification: 'cold' } });
    const { body } = await stats();
    expect(body).toMatchObject({
      total: 3,
      byStatus: { new: 1, contacted: 0, qualified: 1, converted: 0, closed: 1 },
      // The lead not scored yet has no qualification: it is in none of the three.
      byQualification: { hot: 1, warm: 0, cold: 1 },
    });
    expect(body.perDay.at(-1)).toEqual({ date: utcDay(0), count: 3 });
  });

  it('counts leads per UTC day of createdAt for the last `days` days, 30 by default', async () => {
    const leads = statsHarness.store.collection('lead_leads');
    const today = Date.parse(`${utcDay(0)}T00:00:00.000Z`);
    const dated = await Promise.all(
      ['day@stats.test', 'day2@stats.test', 'old@stats.test', 'older@stats.test'].map((email) =>
        captureLead(statsHarness, { email }),
      ),
    );
    const createdAt = [
      new Date(today - DAY_MS).toISOString(), // yesterday's first instant
      new Date(today - 1).toISOString(), // yesterday's last instant
      new Date(today - 29 * DAY_MS).toISOString(), // the oldest of the 30 days
      new Date(today - 29 * DAY_MS - 1).toISOString(), // the day before it: outside the 30
    ];
    for (const [i, lead] of dated.entries()) {
      await leads.updateOne({ _id: lead.id }, { $set: { createdAt: createdAt[i] } });
    }
    const { body, today: answeredOn } = await stats();
    const counts = Object.fromEntries(body.perDay.map((day) => [day.date, day.count]));
    expect(body.perDay).toHaveLength(30);
    expect(counts[answeredOn]).toBe(3);
    expect(counts[utcDay(-1, today)]).toBe(2);
    expect(counts[utcDay(-29, today)]).toBe(1);
    expect(counts[utcDay(-30, today)]).toBeUndefined();
    expect(body.perDay.reduce((sum, day) => sum + day.count, 0)).toBe(6);
    expect(body.total).toBe(7);

    const { body: oneDay } = await stats('?days=1');
    expect(oneDay.perDay).toEqual([{ date: answeredOn, count: 3 }]);
    const { body: year } = await stats('?days=365');
    expect(year.perDay).toHaveLength(365);
    expect(year.perDay.find((day) => day.date === utcDay(-30, today))).toEqual({
      date: utcDay(-30, today),
      count: 1,
    });
    expect(year.perDay.reduce((sum, day) => sum + day.count, 0)).toBe(7);
  });

  it.each([
    ['?days=0', 'days must be >= 1'],
    ['?days=366', 'days must be <= 365'],
    ['?days=-3', 'days must be >= 1'],
    ['?days=1.5', 'days must be an integer'],
    ['?days=week', 'days must be an integer'],
    ['?days=', 'days must be an integer'],
    ['?days=1e400', 'days must be a finite number'],
    ['?days=7&days=8', 'days must be an integer'],
    ['?since=2024-01-01', 'since is not an allowed field'],
  ])('refuses %s with 400 and a readable message', async (query, message) => {
    const response = await statsApi.get(`/api/leads/stats${query}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: message });
  });

  it('ranks the top 10 sources by leads, with their current name, deleted ones too', async () => {
    const sourceHarness = await startHarness();
    try {
      const sourceApi = client(sourceHarness);
      // Twelve sources with 12, 11, ... 1 leads; the lead service knows most of them by their events.
      const sources = Array.from({ length: 12 }, (_, i) => ({
        id: randomUUID(),
        name: `Form ${i}`,
        leads: 12 - i,
      }));
      for (const [i, source] of sources.entries()) {
        if (i === 2) continue; // one it has not heard of: its leads' captured source name is shown
        await publish(sourceHarness.bus, 'source.created', {
          ...SAMPLE_EVENT_DATA['source.created'],
          sourceId: source.id,
          name: i === 0 ? 'Website form (renamed)' : source.name,
        });
      }
      await publish(sourceHarness.bus, 'source.deleted', { sourceId: sources[1]!.id });
      await waitFor(
        'the source read model',
        async () => (await sourceHarness.store.collection('lead_sources').countDocuments({})) === 11,
      );
      await waitFor('the deleted source', () =>
        sourceHarness.store.collection('lead_sources').findOne({ _id: sources[1]!.id, deleted: true }),
      );
      // Leads are captured under a source and a few given other sources in the store (fast).
      const first = await captureLead(sourceHarness, { email: 'first@sources.test' });
      const leads = sourceHarness.store.collection('lead_leads');
      const { _id, ...template } = (await leads.findOne({ _id: first.id }))!;
      await leads.deleteOne({ _id: first.id });
      const docs = sources.flatMap((source) =>
        Array.from({ length: source.leads }, () => ({
          ...template,
          _id: randomUUID(),
          submissionId: randomUUID(),
          sourceId: source.id,
          sourceName: source.name,
        })),
      );
      await leads.insertMany(docs);

      const response = await sourceApi.get('/api/leads/stats');
      expect(response.status).toBe(200);
      const body = response.body as Stats;
      expect(body.total).toBe(78);
      expect(body.bySource).toEqual(
        sources.slice(0, 10).map((source, i) => ({
          id: source.id,
          name: i === 0 ? 'Website form (renamed)' : source.name,
          deleted: i === 1,
          count: source.leads,
          converted: 0,
        })),
      );
    } finally {
      await sourceHarness.close();
    }
  });
});
