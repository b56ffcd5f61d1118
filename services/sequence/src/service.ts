import type { ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { Outbox, ownedDeps, stageService, subscribeGroup } from '@lead-capture/kit';
import { workerMailer } from '@lead-capture/mailer';
import { SequenceCatalog } from './catalog.js';
import { loadSequenceConfig, type SequenceConfig } from './config.js';
import { createNotifiedHandler, ENROLLED_RESULTS_COLLECTION } from './enroller.js';
import {
  ENROLLMENTS_COLLECTION,
  type EnrollmentDocument,
  Enrollments,
  MESSAGES_COLLECTION,
  type MessageDocument,
} from './enrollments.js';
import { SEQUENCE_OUTBOX, SequenceEvents } from './events.js';
import { createLeadChangesHandler } from './lead-changes.js';
import { LEAD_STATES_COLLECTION, type LeadStateDocument, LeadStates } from './lead-states.js';
import { sequenceRoutes } from './routes/sequences/index.js';
import { StepScheduler } from './scheduler.js';
import { SEQUENCES_COLLECTION, type SequenceDocument, Sequences } from './sequences.js';

export const ENROL_GROUP = 'sequence.lead.enrol';
export const LEAD_CHANGES_GROUP = 'sequence.lead.changes';

/** Every collection the sequence service owns: its store opens no other. */
export const SEQUENCE_COLLECTIONS = [
  SEQUENCES_COLLECTION,
  ENROLLMENTS_COLLECTION,
  MESSAGES_COLLECTION,
  LEAD_STATES_COLLECTION,
  ENROLLED_RESULTS_COLLECTION,
  SEQUENCE_OUTBOX,
] as const;

export interface SequenceServiceOptions {
  /**
   * Called after each scheduler pass has ended. For tests: two passes completed after the clock moved
   * prove a due step would have been sent, so "nothing was sent" needs no sleep.
   */
  onSchedulerPass?: () => void;
}

/**
 * Sequences (`sequence_sequences`), enrolments and their schedule (`sequence_enrollments`), every
 * step mail (`sequence_messages`), why a lead may no longer be mailed (`sequence_lead_states`) and
 * the enrolments made for each lead.notified (`sequence_enrol_results`, with lead.enrolled).
 * Enrols on lead.notified, stops on lead changes, sends due steps from a scheduler in start().
 * `config` comes from the environment unless given.
 */
export function createSequenceService(
  deps: ServiceDeps,
  config: SequenceConfig = loadSequenceConfig(),
  options: SequenceServiceOptions = {},
): ServiceModule {
  const { store, bus, logger, now } = ownedDeps(deps, 'sequence', SEQUENCE_COLLECTIONS);
  const sequences = new Sequences(store.collection<SequenceDocument>(SEQUENCES_COLLECTION));
  const enrollments = new Enrollments(
    store.collection<EnrollmentDocument>(ENROLLMENTS_COLLECTION),
    store.collection<MessageDocument>(MESSAGES_COLLECTION),
  );
  const leadStates = new LeadStates(store.collection<LeadStateDocument>(LEAD_STATES_COLLECTION));
  const outbox = new Outbox({
    store,
    bus,
    logger,
    collection: SEQUENCE_OUTBOX,
    relayIntervalMs: config.SEQUENCE_TICK_MS,
    now: () => now().getTime(),
  });
  const events = new SequenceEvents(outbox);
  const catalog = new SequenceCatalog(sequences, enrollments, now);
  const { mailer, checkAtStart } = workerMailer(config, logger, {
    recorded: 'sequence steps',
    retried: 'due steps',
  });
  const scheduler = new StepScheduler({
    sequences,
    enrollments,
    leadStates,
    events,
    mailer,
    logger,
    now,
    intervalMs: config.SEQUENCE_TICK_MS,
    leaseMs: config.SEQUENCE_STEP_LEASE_MS,
    onPass: options.onSchedulerPass,
  });
  const enroller = createNotifiedHandler({ sequences, enrollments, leadStates, store, outbox, now });

  return stageService({
    name: 'sequence',
    routePrefixes: ['/api/sequences'],

    async registerRoutes(app) {
      await app.register(sequenceRoutes, { catalog });
    },

    indexed: [sequences, enrollments, outbox, enroller],
    prepare: checkAtStart,
    relays: [outbox],
    consumers: [
      () => subscribeGroup(bus, ENROL_GROUP, { 'lead.notified': enroller.handleNotified }),
      () => subscribeGroup(bus, LEAD_CHANGES_GROUP, createLeadChangesHandler({ leadStates, events, now })),
    ],
    workers: [scheduler],
    close: () => mailer.close(),
  });
}
