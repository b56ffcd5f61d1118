import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What the floor uses of a libsql connection. */
interface Connection {
  pragma(source: string): unknown;
  exec(source: string): unknown;
  prepare(source: string): { run(params: unknown[]): unknown; get(params: unknown[]): unknown };
  close(): void;
}

// The docstore's own SQLite binding (the same build the chain's store runs on), not a second copy.
const Database = createRequire(join(import.meta.dirname, '../../../packages/docstore/package.json'))(
  'libsql',
) as new (
  path: string,
) => Connection;

/** What the storage floor measured: CPU time (user + system) per lead, and leads per wall-clock second. */
export interface StorageFloor {
  leads: number;
  cpuMicrosPerLead: number;
  leadsPerSecond: number;
}

const LEADS_PER_TRANSACTION = 100;

/** A lead document of the size the chain stores (about 2 KB of JSON once enriched and scored). */
function leadDocument(n: number): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    _id: `lead-${n}`,
    submissionId: `submission-${n}`,
    firstName: 'Ada',
    lastName: `Floor ${n}`,
    email: `lead-${n}@company${n % 300}.example`,
    phone: `+14155550${String(n % 1000).padStart(3, '0')}`,
    company: `Company ${n % 300}`,
    identityKeys: [`email:lead-${n}@company${n % 300}.example`, `phone:+14155550${n % 1000}`],
    status: 'new',
    score: 0,
    qualification: null,
    scoreReasons: [],
    sourceId: 'source-1',
    sourceName: 'Bench',
    assignedTo: null,
    pipelineId: 'pipeline-1',
    stageId: 'stage-1',
    notes: null,
    tagIds: [],
    custom: { campaign: 'spring', utm_source: 'bench' },
    attribution: { utmSource: 'bench', utmMedium: null, utmCampaign: 'spring', referrer: null },
    client: { ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) bench' },
    enrichment: null,
    notifications: [],
    enrollments: [],
    isDuplicate: false,
    duplicateOf: null,
    progress: { enrichedAt: null, scoredAt: null },
    createdAt: now,
    updatedAt: now,
  };
}

/** What each of the four later stages adds to the lead (enrichment, score, notifications, enrolment). */
const STAGE_CHANGES: ((doc: Record<string, unknown>) => void)[] = [
  (doc) => {
    doc.enrichment = {
      email: { valid: true, disposable: false, freeProvider: false, role: false, mx: 'unknown' },
      geo: { country: 'US', region: 'CA', city: null, timezone: 'America/Los_Angeles' },
      company: { name: doc.company, domain: 'company.example', source: 'email' },
    };
    doc.progress = { ...(doc.progress as object), enrichedAt: new Date().toISOString() };
  },
  (doc) => {
    doc.score = 42;
    doc.qualification = 'warm';
    doc.scoreReasons = [
      { rule: 'business-email', points: 20 },
      { rule: 'phone', points: 10 },
      { rule: 'company', points: 12 },
    ];
  },
  (doc) => {
    doc.notifications = [{ id: `mail-${String(doc._id)}`, to: 'sales@example.com', status: 'outbox' }];
  },
  (doc) => {
    doc.enrollments = [
      { sequenceId: 'sequence-1', sequenceName: 'Bench', enrollmentId: `e-${String(doc._id)}` },
    ];
  },
];

/**
 * The storage floor of the chain: one SQLite writer (libsql, WAL, synchronous=FULL) storing a
 * lead-sized JSON document per lead with 5 indexed columns, one INSERT plus 4 read-modify-write
 * UPDATEs of that document per lead (as if four stages each added their result), 100 leads per
 * transaction, nothing else running. What the chain would cost if the storage were all it did.
 */
export async function measureStorageFloor(leads: number): Promise<StorageFloor> {
  const dir = await mkdtemp(join(tmpdir(), 'storage-floor-'));
  const db = new Database(join(dir, 'floor.sqlite'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(`CREATE TABLE leads (id TEXT PRIMARY KEY, doc TEXT NOT NULL, email TEXT, source_id TEXT,
      status TEXT, score INTEGER, created_at TEXT)`);
    for (const column of ['email', 'source_id', 'status', 'score', 'created_at']) {
      db.exec(`CREATE INDEX leads_${column} ON leads (${column})`);
    }
    const insert = db.prepare(
      'INSERT INTO leads (id, doc, email, source_id, status, score, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const read = db.prepare('SELECT doc FROM leads WHERE id = ?');
    const update = db.prepare(
      'UPDATE leads SET doc = ?, email = ?, source_id = ?, status = ?, score = ?, created_at = ? WHERE id = ?',
    );
    const columns = (doc: Record<string, unknown>) => [
      doc.email,
      doc.sourceId,
      doc.status,
      doc.score,
      doc.createdAt,
    ];
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let first = 0; first < leads; first += LEADS_PER_TRANSACTION) {
      db.exec('BEGIN IMMEDIATE');
      const last = Math.min(leads, first + LEADS_PER_TRANSACTION);
      for (let n = first; n < last; n++) {
        const doc = leadDocument(n);
        insert.run([doc._id, JSON.stringify(doc), ...columns(doc)]);
        for (const change of STAGE_CHANGES) {
          const row = read.get([doc._id]) as { doc: string };
          const stored = JSON.parse(row.doc) as Record<string, unknown>;
          change(stored);
          stored.updatedAt = new Date().toISOString();
          update.run([JSON.stringify(stored), ...columns(stored), stored._id]);
        }
      }
      db.exec('COMMIT');
    }
    const elapsedMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    return {
      leads,
      cpuMicrosPerLead: Math.round(((cpu.user + cpu.system) / leads) * 10) / 10,
      leadsPerSecond: Math.round((leads * 1000) / elapsedMs),
    };
  } finally {
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
}
