import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus } from '@lead-capture/bus';
import { CONSUMER_GROUPS, LEAD_STATUSES, validateEvent } from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import {
  buildServiceApp,
  createLogger,
  GATEWAY_SIGNER,
  generateInternalKeys,
  INTERNAL_IDENTITY_HEADER,
  signIdentity,
  systemClock,
} from '@lead-capture/kit';
import { seededRandom } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import { loadLeadConfig } from '../src/config.js';
import { derivedFields } from '../src/normalize.js';
import { createLeadService } from '../src/service.js';
import type { LeadDoc } from '../src/store.js';

const KEYS = generateInternalKeys({ names: [GATEWAY_SIGNER] });
const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Ken', 'Barbara', 'Dennis', 'Radia', 'Tim'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Torvalds', 'Hamilton', 'Thompson', 'Liskov', 'Ritchie'];
export const SOURCE_IDS = Array.from({ length: 20 }, () => randomUUID());
export const USER_IDS = Array.from({ length: 10 }, () => randomUUID());
const NOW = Date.now();

/** A stored lead as the capture writes it, with spread-out values for every filter. */
function leadDoc(i: number, random: () => number): LeadDoc {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const fields = {
    firstName: pick(FIRST_NAMES),
    lastName: pick(LAST_NAMES),
    email: `person${i}@company${Math.floor(random() * 5000)}.example`,
    phone: `+1415${String(i).padStart(7, '0')}`,
    company: `Company ${Math.floor(random() * 5000)}`,
  };
  const createdAt = new Date(NOW - Math.floor(random() * 180 * 24 * 3600 * 1000)).toISOString();
  const isDuplicate = random() < 0.05;
  return {
    _id: randomUUID(),
    submissionId: randomUUID(),
    ...fields,
    phoneOriginal: fields.phone,
    ...derivedFields(fields),
    status: pick(LEAD_STATUSES),
    score: Math.floor(random() * 101),
    qualification: pick(['hot', 'warm', 'cold'] as const),
    scoreReasons: [{ points: 20, label: 'Business e-mail' }],
    // The first source holds about half the leads, as a big import's source does.
    sourceId: random() < 0.5 ? SOURCE_IDS[0]! : pick(SOURCE_IDS),
    sourceName: 'Website form',
    assignedTo: random() < 0.4 ? null : pick(USER_IDS),
    pipelineId: null,
    stageId: null,
    notes: null,
    tagIds: [],
    custom: { budget: `${Math.floor(random() * 100)}k` },
    attribution: { utm: { utm_source: 'newsletter' } },
    client: { ip: '203.0.113.7', userAgent: 'Mozilla/5.0' },
    enrichment: { email: { deliverable: true }, geo: { country: 'US' }, company: {} },
    notifications: [],
    enrollments: [],
    isDuplicate,
    duplicateOf: isDuplicate ? randomUUID() : null,
    capture: {
      receivedEventId: randomUUID(),
      origin: 'webhook',
      kind: 'created',
      importId: null,
      importRow: null,
      deduplicated: true,
      capturedEventId: randomUUID(),
    },
    progress: { enrichedAt: createdAt, scoredAt: createdAt },
    createdAt,
    updatedAt: createdAt,
  };
}

export interface BenchService {
  app: FastifyInstance;
  store: DocStore;
  /** A freshly signed identity header (they live 60 s). */
  /** The identity header for one request (method, url) to the lead service. */
  auth(request: { method: string; url: string }): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/** The lead service over an embedded store holding `count` leads, with its indexes. */
export async function startWithLeads(count: number): Promise<BenchService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'lead-bench-'));
  const logger = createLogger({ level: 'silent', name: 'lead-bench' });
  const store = await openStore(undefined, { dataDir });
  const bus = createInProcessBus({ logger, store, validate: validateEvent, declareGroups: CONSUMER_GROUPS });
  const module = createLeadService(
    {
      logger,
      store,
      bus,
      internal: {
        request: async () => {
          throw new Error('unused');
        },
      },
      now: systemClock,
    },
    loadLeadConfig({}),
  );
  const random = seededRandom(7);
  const leads = store.collection<LeadDoc>('lead_leads');
  for (let start = 0; start < count; start += 5000) {
    const batch = Array.from({ length: Math.min(5000, count - start) }, (_, i) => leadDoc(start + i, random));
    await leads.insertMany(batch);
  }
  // The sources' read model, as the lead service holds it once their source.created arrived.
  await store.collection('lead_sources').insertMany(
    SOURCE_IDS.map((id, index) => ({
      _id: id,
      name: `Source ${index}`,
      deleted: false,
      revision: 1,
      eventAt: new Date(NOW).toISOString(),
    })),
  );
  // Started after the load: its indexes are then built once over all the leads.
  const app = await buildServiceApp(module, { logger, store, bus }, { trust: KEYS.trust });
  await module.start?.();
  return {
    app,
    store,
    async auth(request: { method: string; url: string }) {
      const identity = { method: 'jwt', userId: USER_IDS[0]!, role: 'admin', scope: 'full' } as const;
      const target = { service: module.name, method: request.method, path: request.url };
      return {
        [INTERNAL_IDENTITY_HEADER]: await signIdentity(identity, KEYS.signer(GATEWAY_SIGNER)!, target),
      };
    },
    async close() {
      await module.stop?.();
      await app.close();
      await bus.close();
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
