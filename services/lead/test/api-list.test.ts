import { randomUUID } from 'node:crypto';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIST_FIELDS, type ListBody } from './api-fixtures.js';
import {
  type ApiLead,
  captureLead,
  client,
  type Harness,
  publish,
  startHarness,
  waitFor,
} from './harness.js';

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
    ['?status=new&status=closed', 'status must be given once'],
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
