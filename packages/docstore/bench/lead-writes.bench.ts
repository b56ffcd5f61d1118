/**
 * The embedded store under the writes a lead's trip through the chain makes: a lead inserted with the
 * lead service's indexes, then the progress updates the workers' events bring (enrichment, score,
 * notification, enrolment), 64 writers at once as the chain's handlers are. Reports the CPU time
 * (user + system, which the machine's other load disturbs much less than wall time) and the wall
 * time per lead, medians of 3 rounds. Run: `pnpm bench lead-writes`.
 * Prints a table, then one last line `BENCH_JSON {...}` for the root bench runner.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Collection, openEmbeddedStore } from '../src/index.js';

const LEADS_PER_ROUND = 3_000;
const ROUNDS = 3;
const WRITERS = 64;
const STATUSES = ['new', 'contacted', 'qualified', 'won', 'lost'];

/** The lead collection's indexes, as services/lead/src/store.ts declares them. */
async function createLeadIndexes(leads: Collection): Promise<void> {
  await leads.createIndex({ submissionId: 1 }, { unique: true });
  await leads.createIndex({ createdAt: -1 });
  await leads.createIndex({ score: -1 });
  await leads.createIndex({ status: 1, score: -1 });
  await leads.createIndex({ status: 1, createdAt: -1 });
  await leads.createIndex({ qualification: 1, createdAt: -1 });
  await leads.createIndex({ sourceId: 1, createdAt: -1 });
  await leads.createIndex({ assignedTo: 1, createdAt: -1 });
  await leads.createIndex({ isDuplicate: 1, createdAt: -1 });
  await leads.createIndex({ duplicateOf: 1, createdAt: 1 });
  await leads.createIndex({ identityKeys: 1 });
  await leads.createIndex({ pipelineId: 1, stageId: 1 });
  await leads.createIndex({ tagIds: 1 });
  await leads.createIndex({ searchText: 1 }, { substring: true });
  await leads.createIndex({ phoneDigits: 1 }, { substring: true });
}

function leadDocument(n: number, round: number) {
  const id = `r${round}-lead-${n}`;
  const createdAt = new Date(Date.UTC(2026, 0, 1) + n * 1000);
  return {
    _id: id,
    submissionId: `r${round}-submission-${n}`,
    email: `person${n}@company${n % 500}.example`,
    firstName: 'Ada',
    lastName: `Person ${n}`,
    phone: `+1555${String(n).padStart(7, '0')}`,
    company: `Company ${n % 500}`,
    sourceId: `source-${n % 20}`,
    status: STATUSES[n % STATUSES.length],
    pipelineId: 'default',
    stageId: 'new',
    isDuplicate: false,
    identityKeys: [`email:person${n}@company${n % 500}.example`, `phone:+1555${String(n).padStart(7, '0')}`],
    tagIds: [],
    searchText: `ada person ${n} person${n}@company${n % 500}.example company ${n % 500}`,
    phoneDigits: `1555${String(n).padStart(7, '0')}`,
    customFields: { message: 'Interested in the enterprise plan', budget: '10k' },
    createdAt,
    updatedAt: createdAt,
  };
}

/** One lead's writes: the insert, then its four progress updates in order. */
async function leadTrip(leads: Collection, n: number, round: number): Promise<void> {
  const lead = leadDocument(n, round);
  await leads.insertOne(lead);
  const at = () => new Date();
  await leads.updateOne(
    { _id: lead._id },
    {
      $set: {
        enrichment: {
          emailValid: true,
          mxFound: true,
          country: 'US',
          companyDomain: `company${n % 500}.example`,
        },
        updatedAt: at(),
      },
    },
  );
  await leads.updateOne(
    { _id: lead._id },
    {
      $set: {
        score: n % 100,
        qualification: n % 100 >= 70 ? 'hot' : n % 100 >= 40 ? 'warm' : 'cold',
        scoreReasons: [{ rule: 'email', points: 20 }],
        updatedAt: at(),
      },
    },
  );
  await leads.updateOne({ _id: lead._id }, { $push: { notifications: { at: at(), to: 'team' } } });
  await leads.updateOne({ _id: lead._id }, { $push: { enrolments: { sequenceId: 's1', at: at() } } });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const dataDir = await mkdtemp(join(tmpdir(), 'lead-writes-bench-'));
try {
  const store = await openEmbeddedStore({ dataDir });
  const leads = store.collection('leads');
  await createLeadIndexes(leads);
  const cpuMicrosPerLead: number[] = [];
  const wallMicrosPerLead: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let next = 0;
    const cpuBefore = process.cpuUsage();
    const wallBefore = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (next < LEADS_PER_ROUND) await leadTrip(leads, next++, round);
      }),
    );
    const cpu = process.cpuUsage(cpuBefore);
    const wallMicros = Number(process.hrtime.bigint() - wallBefore) / 1000;
    cpuMicrosPerLead.push((cpu.user + cpu.system) / LEADS_PER_ROUND);
    wallMicrosPerLead.push(wallMicros / LEADS_PER_ROUND);
  }
  await store.close();
  const results = {
    leadsPerRound: LEADS_PER_ROUND,
    writers: WRITERS,
    cpuMicrosPerLead: Math.round(median(cpuMicrosPerLead)),
    wallMicrosPerLead: Math.round(median(wallMicrosPerLead)),
    leadsPerCpuSecond: Math.round(1e6 / median(cpuMicrosPerLead)),
  };
  console.log(
    `embedded docstore, a lead's writes (insert + 4 progress updates, 15 lead indexes), ${WRITERS} writers, ` +
      `median of ${ROUNDS} rounds of ${LEADS_PER_ROUND} leads`,
  );
  console.table({
    'CPU time per lead (µs)': results.cpuMicrosPerLead,
    'wall time per lead (µs)': results.wallMicrosPerLead,
    'leads per CPU second': results.leadsPerCpuSecond,
  });
  console.log(`BENCH_JSON ${JSON.stringify({ name: 'docstore-embedded-lead-writes', results })}`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
