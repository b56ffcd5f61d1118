import type { Subscription } from '@lead-capture/bus';
import type { EventEnvelope, KnownEvent } from '@lead-capture/contracts';
import { Outbox, type ServiceDeps, type ServiceModule, subscribeGroup } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { CAPTURE_MAX_ATTEMPTS, CAPTURE_PREFETCH, createCaptureHandler } from './capture.js';
import { type LeadConfig, loadLeadConfig } from './config.js';
import type { LeadContext } from './context.js';
import { createDirectoryHandler, isDirectoryEvent } from './directory.js';
import { createImportTracker } from './imports.js';
import { createLeadActions } from './lead-actions.js';
import { createProgressHandler, isProgressEvent } from './progress.js';
import { internalLeadRoutes } from './routes/internal/lead/leads.js';
import { leadsRoutes } from './routes/leads/index.js';
import { createIndexes, LEAD_OUTBOX, leadCollections } from './store.js';

const CAPTURE_GROUP = 'lead.lead.capture';
const PROGRESS_GROUP = 'lead.lead.progress';
const DIRECTORY_GROUP = 'lead.directory.sync';

/** The bus validated the payload against its type's schema before the handler runs. */
function asKnown(event: EventEnvelope): KnownEvent {
  return event as KnownEvent;
}

export interface LeadServiceOptions {
  /** How often the outbox relay looks for events a request could not publish, and how old they must be. Default 5 s. */
  relayIntervalMs?: number;
}

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
  const relayIntervalMs = options.relayIntervalMs ?? 5000;
  const context: LeadContext = {
    collections: leadCollections(deps.store),
    bus: deps.bus,
    config,
    now: deps.now,
  };
  const outbox = new Outbox({
    store: deps.store,
    bus: deps.bus,
    logger: deps.logger,
    collection: LEAD_OUTBOX,
    takeOverAfterMs: relayIntervalMs,
    relayIntervalMs,
  });
  const actions = createLeadActions(context, outbox);
  const imports = createImportTracker(context, outbox);
  const captureLead = createCaptureHandler(context, imports, outbox);
  const recordProgress = createProgressHandler(context);
  const syncDirectory = createDirectoryHandler(context);
  const subscriptions: Subscription[] = [];

  return {
    name: 'lead',
    routePrefixes: ['/api/leads'],

    async registerRoutes(app: FastifyInstance) {
      await app.register(leadsRoutes, { context, actions, imports });
      await app.register(internalLeadRoutes, { context, actions, imports });
    },

    async start() {
      await createIndexes(context.collections);
      subscriptions.push(
        await subscribeGroup(
          deps.bus,
          CAPTURE_GROUP,
          async (event, delivery) => {
            const known = asKnown(event);
            if (known.type === 'lead.received') await captureLead(known, delivery);
          },
          { maxAttempts: CAPTURE_MAX_ATTEMPTS, prefetch: CAPTURE_PREFETCH },
        ),
        await subscribeGroup(
          deps.bus,
          PROGRESS_GROUP,
          async (event) => {
            const known = asKnown(event);
            if (isProgressEvent(known)) await recordProgress(known);
          },
          // Chained, a lead's progress events come together at the end of its chain: one write.
          {
            chainBatch: (events) => recordProgress.batch(events.map(asKnown).filter(isProgressEvent)),
            batch: (events) => recordProgress.leadsBatch(events.map(asKnown).filter(isProgressEvent)),
          },
        ),
        // One at a time: a pipeline's update and its deletion must not overtake each other here.
        await subscribeGroup(
          deps.bus,
          DIRECTORY_GROUP,
          async (event) => {
            const known = asKnown(event);
            if (isDirectoryEvent(known)) await syncDirectory(known);
          },
          { prefetch: 1 },
        ),
      );
      await outbox.createIndexes();
      outbox.start();
    },

    async stop() {
      await outbox.stop();
      await Promise.all(subscriptions.splice(0).map((subscription) => subscription.cancel()));
    },
  };
}
