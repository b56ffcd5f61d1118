/**
 * The embedded store at lead-list scale: loads 100,000 lead-like documents (with the indexes a lead
 * list needs), then reports medians over repeated runs. Run: `pnpm --filter @lead-capture/docstore
 * bench`. Prints a table, then one last line `BENCH_JSON {...}` for the root bench runner.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '@lead-capture/testing';
import { type Document, openEmbeddedStore } from '../src/index.js';

const DOCUMENTS = 100_000;
const SOURCES = 20;
const RUNS = 200;
const WRITERS = 64;
const INSERTS = 20_000;
/** Tags a lead may carry (its `tagIds`, a multikey field): each one is on about 0.5% of the leads. */
const TAGS = 200;

const STATUSES = ['new', 'new', 'new', 'new', 'contacted', 'contacted', 'qualified', 'won', 'lost', 'lost'];
const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Ken', 'Barbara', 'Dennis', 'Radia', 'Tim'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Torvalds', 'Hamilton', 'Thompson', 'Liskov', 'Ritchie'];
const CITIES = [
  ['Paris', 'FR'],
  ['Berlin', 'DE'],
  ['Austin', 'US'],
  ['Lagos', 'NG'],
  ['Pune', 'IN'],
  ['Osaka', 'JP'],
] as const;
const NOW = Date.now();

const random = seededRandom(42);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];

function lead(i: number): Document {
  const first = pick(FIRST_NAMES);
  const last = pick(LAST_NAMES);
  const [city, country] = pick(CITIES);
  const createdAt = new Date(NOW - Math.floor(random() * 180 * 24 * 3600 * 1000));
  const score = Math.floor(random() * 101);
  const company = Math.floor(random() * 5000);
  return {
    _id: randomUUID(),
    email: `${first}.${last}.${i}@company${company}.example`.toLowerCase(),
    firstName: first,
    lastName: last,
    phone: `+1555${String(i).padStart(7, '0')}`,
    company: `Company ${company}`,
    status: pick(STATUSES),
    sourceId: `source-${Math.floor(random() * SOURCES)}`,
    pipelineId: 'pipeline-default',
    stageId: `stage-${Math.floor(random() * 5)}`,
    score,
    qualification: score >= 70 ? 'hot' : score >= 40 ? 'warm' : 'cold',
    tags: random() < 0.3 ? ['webinar', 'newsletter'] : ['inbound'],
    assignedTo: random() < 0.25 ? null : `user-${Math.floor(random() * 10)}`,
    fields: {
      message: 'Interested in a demo for our sales team next quarter.',
      utm_source: 'google',
      budget: '10k',
    },
    enrichment: {
      geo: { city, country },
      emailValid: random() > 0.05,
      companyDomain: `company${company}.example`,
    },
    duplicateOf: null,
    searchText:
      `${first} ${last} ${first}.${last}.${i}@company${company}.example company ${company}`.toLowerCase(),
    phoneDigits: `1555${String(i).padStart(7, '0')}`,
    // As the lead service keeps them: the keys duplicates are found by, and the lead's tags (arrays).
    identityKeys: [
      `email:${first}.${last}.${i}@company${company}.example`.toLowerCase(),
      `phone:+1555${String(i).padStart(7, '0')}`,
    ],
    tagIds:
      random() < 0.5 ? [] : [`tag-${Math.floor(random() * TAGS)}`, `tag-${Math.floor(random() * TAGS)}`],
    createdAt,
    updatedAt: createdAt,
  };
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function percentile95(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))];
}

async function timeRuns(
  run: (i: number) => Promise<unknown>,
  runs = RUNS,
): Promise<{ medianMs: number; p95Ms: number }> {
  for (let i = 0; i < Math.min(20, runs / 10); i++) await run(i);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await run(i);
    samples.push(performance.now() - started);
  }
  return { medianMs: median(samples), p95Ms: percentile95(samples) };
}

const dataDir = await mkdtemp(join(tmpdir(), 'docstore-bench-'));
try {
  const store = await openEmbeddedStore({ dataDir });
  const leads = store.collection('leads');
  await leads.createIndex({ email: 1 }, { unique: true });
  await leads.createIndex({ status: 1, sourceId: 1, createdAt: -1 });
  await leads.createIndex({ sourceId: 1 });
  await leads.createIndex({ createdAt: -1 });
  await leads.createIndex({ assignedTo: 1 });
  await leads.createIndex({ score: -1 });
  await leads.createIndex({ phone: 1 });
  // Multikey (array) fields, as the lead service's duplicate keys and tags.
  await leads.createIndex({ identityKeys: 1 });
  await leads.createIndex({ tagIds: 1 });
  // As the lead service's list search: folded text and phone digits, with trigram (substring) indexes.
  await leads.createIndex({ searchText: 1 }, { substring: true });
  await leads.createIndex({ phoneDigits: 1 }, { substring: true });

  const emails: string[] = [];
  const ids: string[] = [];
  const loadStarted = performance.now();
  for (let start = 0; start < DOCUMENTS; start += 1000) {
    const batch = Array.from({ length: 1000 }, (_, offset) => lead(start + offset));
    for (const document of batch) {
      emails.push(String(document.email));
      ids.push(document._id);
    }
    await leads.insertMany(batch);
  }
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const rssAfterLoadMegabytes = process.memoryUsage().rss / 2 ** 20;

  const filterFor = (i: number) => ({ status: 'new', sourceId: `source-${i % SOURCES}` });
  let pageLength = 0;
  const pagedFind = await timeRuns(async (i) => {
    const page = await leads.find(filterFor(i), { sort: { createdAt: -1 }, skip: 40, limit: 20 });
    pageLength = page.length;
  });
  let matching = 0;
  const count = await timeRuns(async (i) => {
    matching = await leads.countDocuments(filterFor(i));
  });
  const byEmail = await timeRuns(async (i) => {
    const found = await leads.findOne({ email: emails[(i * 7_919) % DOCUMENTS] });
    if (!found) throw new Error('findOne by email found nothing');
  });

  // What the query planner answers from the indexes: each scenario's count and first page.
  const lastMonth = { $gte: new Date(NOW - 30 * 24 * 3600 * 1000) };
  // The lead service's releaseKeys: is the key still held by another lead? (Here: no, so no early stop.)
  const keyOf = (i: number) => {
    const n = (i * 7_919) % DOCUMENTS;
    return { key: `email:${emails[n]}`, id: ids[n] };
  };
  const planned: Record<
    string,
    { run: (i: number) => Promise<unknown>; total: () => Promise<number>; runs?: number }
  > = {
    'count {status}': {
      run: () => leads.countDocuments({ status: 'qualified' }),
      total: () => leads.countDocuments({ status: 'qualified' }),
    },
    'count {assignedTo: null}': {
      run: () => leads.countDocuments({ assignedTo: null }),
      total: () => leads.countDocuments({ assignedTo: null }),
    },
    'count {createdAt: last 30 days}': {
      run: () => leads.countDocuments({ createdAt: lastMonth }),
      total: () => leads.countDocuments({ createdAt: lastMonth }),
    },
    'find {createdAt: last 30 days, sourceId} sort createdAt -1, limit 20': {
      run: () =>
        leads.find({ createdAt: lastMonth, sourceId: 'source-3' }, { sort: { createdAt: -1 }, limit: 20 }),
      total: () => leads.countDocuments({ createdAt: lastMonth, sourceId: 'source-3' }),
    },
    'find {status} sort score -1, skip 200 limit 50': {
      run: () => leads.find({ status: 'qualified' }, { sort: { score: -1 }, skip: 200, limit: 50 }),
      total: () => leads.countDocuments({ status: 'qualified' }),
    },
    'find {} sort createdAt -1, skip 40000 limit 20': {
      run: () => leads.find({}, { sort: { createdAt: -1 }, skip: 40_000, limit: 20 }),
      total: () => leads.countDocuments({}),
    },
    'count {email: /hopper\\.1/} (indexed field)': {
      run: () => leads.countDocuments({ email: { $regex: 'hopper\\.1' } }),
      total: () => leads.countDocuments({ email: { $regex: 'hopper\\.1' } }),
    },
    'count {$or: [{email: /hopper\\.1/}, {phone: /5550001/}]}': {
      run: () =>
        leads.countDocuments({
          $or: [{ email: { $regex: 'hopper\\.1' } }, { phone: { $regex: '5550001' } }],
        }),
      total: () =>
        leads.countDocuments({
          $or: [{ email: { $regex: 'hopper\\.1' } }, { phone: { $regex: '5550001' } }],
        }),
    },
    'list search by name fragment {$or: [{searchText: /lovela/}]} sort createdAt -1, limit 20': {
      run: () =>
        leads.find({ $or: [{ searchText: { $regex: 'lovela' } }] }, { sort: { createdAt: -1 }, limit: 20 }),
      total: () => leads.countDocuments({ $or: [{ searchText: { $regex: 'lovela' } }] }),
    },
    'list search by phone digits {$or: [searchText, phoneDigits: /5550042/]} sort createdAt -1, limit 20': {
      run: () =>
        leads.find(
          { $or: [{ searchText: { $regex: '5550042' } }, { phoneDigits: { $regex: '5550042' } }] },
          { sort: { createdAt: -1 }, limit: 20 },
        ),
      total: () =>
        leads.countDocuments({
          $or: [{ searchText: { $regex: '5550042' } }, { phoneDigits: { $regex: '5550042' } }],
        }),
    },
    'list search, rare e-mail fragment {searchText: /hopper.1234@/} + status, sort createdAt -1': {
      run: () =>
        leads.find(
          { status: 'new', $or: [{ searchText: { $regex: 'hopper\\.1234@' } }] },
          { sort: { createdAt: -1 }, limit: 20 },
        ),
      total: () =>
        leads.countDocuments({ status: 'new', $or: [{ searchText: { $regex: 'hopper\\.1234@' } }] }),
    },
    'findOne {identityKeys: key, _id: {$ne: id}} (multikey, releaseKeys)': {
      run: async (i) => {
        const { key, id } = keyOf(i);
        if (await leads.findOne({ identityKeys: key, _id: { $ne: id } }))
          throw new Error('unexpected holder');
      },
      total: () => leads.countDocuments({ identityKeys: keyOf(0).key }),
      runs: 40,
    },
    'find {tagIds: x} (multikey)': {
      run: (i) => leads.find({ tagIds: `tag-${i % TAGS}` }),
      total: () => leads.countDocuments({ tagIds: 'tag-0' }),
      runs: 40,
    },
  };
  const plannedResults: Record<string, { medianMs: number; p95Ms: number; matching: number }> = {};
  for (const [name, { run, total, runs }] of Object.entries(planned)) {
    const timing = await timeRuns(run, runs);
    plannedResults[name] = {
      medianMs: round(timing.medianMs),
      p95Ms: round(timing.p95Ms),
      matching: await total(),
    };
  }

  const events = store.collection('events');
  let written = 0;
  const insertStarted = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (written < INSERTS) {
        written++;
        await events.insertOne({
          _id: randomUUID(),
          type: 'lead.captured',
          leadId: randomUUID(),
          at: new Date(),
        });
      }
    }),
  );
  const insertsPerSecond = INSERTS / ((performance.now() - insertStarted) / 1000);
  const heapMegabytes = process.memoryUsage().heapUsed / 2 ** 20;
  global.gc?.();
  const rssIdleMegabytes = process.memoryUsage().rss / 2 ** 20;
  await store.close();

  const reopenStarted = performance.now();
  const reopened = await openEmbeddedStore({ dataDir });
  const reopenSeconds = (performance.now() - reopenStarted) / 1000;
  await reopened.close();

  const results = {
    documents: DOCUMENTS,
    loadSeconds: round(loadSeconds),
    reopenSeconds: round(reopenSeconds),
    heapMegabytes: Math.round(heapMegabytes),
    rssAfterLoadMegabytes: Math.round(rssAfterLoadMegabytes),
    rssIdleMegabytes: Math.round(rssIdleMegabytes),
    pagedFindMedianMs: round(pagedFind.medianMs),
    pagedFindP95Ms: round(pagedFind.p95Ms),
    countMedianMs: round(count.medianMs),
    countP95Ms: round(count.p95Ms),
    findOneByUniqueMedianMs: round(byEmail.medianMs),
    insertOpsPerSecond: Math.round(insertsPerSecond),
    concurrentWriters: WRITERS,
    planned: plannedResults,
  };
  console.log(
    `embedded docstore, ${DOCUMENTS} leads: loaded in ${results.loadSeconds} s, reopened in ` +
      `${results.reopenSeconds} s, heap ${results.heapMegabytes} MB, RSS ${results.rssAfterLoadMegabytes} MB ` +
      `after loading, ${results.rssIdleMegabytes} MB at the end; ${RUNS} runs each`,
  );
  console.table({
    [`find {status, sourceId} sort createdAt -1, skip 40 limit 20 (${pageLength} returned)`]: {
      median_ms: results.pagedFindMedianMs,
      p95_ms: results.pagedFindP95Ms,
    },
    [`countDocuments, same filter (${matching} match)`]: {
      median_ms: results.countMedianMs,
      p95_ms: results.countP95Ms,
    },
    'findOne by unique email': { median_ms: results.findOneByUniqueMedianMs, p95_ms: round(byEmail.p95Ms) },
    ...Object.fromEntries(
      Object.entries(plannedResults).map(([name, { medianMs, p95Ms, matching }]) => [
        `${name} (${matching} match)`,
        { median_ms: medianMs, p95_ms: p95Ms },
      ]),
    ),
  });
  console.log(`insertOne, ${WRITERS} concurrent writers, fsynced: ${results.insertOpsPerSecond} ops/s`);
  console.log(`BENCH_JSON ${JSON.stringify({ name: 'docstore-embedded-query', results })}`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
