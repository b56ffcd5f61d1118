import type { OutboxRelayOptions, ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { ownedDeps, serviceOutbox, stageService, subscribeGroup } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { CAPTURE_MAX_ATTEMPTS, CAPTURE_PREFETCH, createCaptureHandler } from './capture.js';
import { type LeadConfig, loadLeadConfig } from './config.js';
import type { LeadContext } from './context.js';
import { createDirectoryHandler } from './directory.js';
import { createImportTracker } from './imports.js';
import { createLeadActions } from './lead-actions.js';
import { DefaultPlacement } from './placement.js';
import { createProgressHandler } from './progress.js';
import { internalLeadRoutes } from './routes/internal/lead/leads.js';
import { leadsRoutes } from './routes/leads/index.js';
import { createIndexes, LEAD_COLLECTIONS, LEAD_OUTBOX, leadCollections } from './store.js';

const CAPTURE_GROUP = 'lead.lead.capture';
const PROGRESS_GROUP = 'lead.lead.progress';
const DIRECTORY_GROUP = 'lead.directory.sync';

export type LeadServiceOptions = OutboxRelayOptions;

/**
 * The lead service: the Leads API under /api/leads, the capture of every submission
 * (lead.received -> lead.captured), the workers' results on each lead, and the read models of
 * sources, pipelines and users. `config` defaults to the environment (see LEAD_CONFIG).
 */
export function createLeadService(
  deps: ServiceDeps,
  config: LeadConfig = loadLeadConfig(),
  options: LeadServiceOptions = {},
): ServiceModule {
  const own = ownedDeps(deps, 'lead', [...Object.values(LEAD_COLLECTIONS), LEAD_OUTBOX]);
  const context: LeadContext = {
    collections: leadCollections(own.store),
    bus: own.bus,
    config,
    now: deps.now,
    transactional: own.store.transactional,
  };
  const outbox = serviceOutbox(own, LEAD_OUTBOX, options);
  const actions = createLeadActions(context, outbox);
  const imports = createImportTracker(context, outbox);
  // Kept in memory where this is the only lead service on its store (see DefaultPlacement).
  const defaultPlacement = new DefaultPlacement(context.collections.pipelines, {
    cache: own.store.kind === 'embedded',
  });
  const captureLead = createCaptureHandler(context, imports, outbox, defaultPlacement);
  const recordProgress = createProgressHandler(context);
  const syncDirectory = createDirectoryHandler(context, defaultPlacement);

  return stageService({
    name: 'lead',
    routePrefixes: ['/api/leads'],

    async registerRoutes(app: FastifyInstance) {
      await app.register(leadsRoutes, { context, actions, imports });
      await app.register(internalLeadRoutes, { context, actions, imports });
    },

    async prepare() {
      await createIndexes(context.collections);
      await outbox.createIndexes();
    },
    relays: [outbox],
    consumers: [
      () =>
        subscribeGroup(
          own.bus,
          CAPTURE_GROUP,
          { 'lead.received': captureLead },
          { maxAttempts: CAPTURE_MAX_ATTEMPTS, prefetch: CAPTURE_PREFETCH },
        ),
      // Chained, a lead's progress events come together at the end of its chain: one write.
      () =>
        subscribeGroup(own.bus, PROGRESS_GROUP, recordProgress.handlers, {
          chainBatch: recordProgress.batch,
          // On RabbitMQ: what the prefetch holds, each lead's events applied together.
          batch: (events) => recordProgress.leadsBatch(events as Parameters<typeof recordProgress.batch>[0]),
        }),
      // One at a time: a pipeline's update and its deletion must not overtake each other here.
      () => subscribeGroup(own.bus, DIRECTORY_GROUP, syncDirectory, { prefetch: 1 }),
    ],
  });
}
