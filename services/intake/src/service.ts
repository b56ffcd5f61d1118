import type { ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { loadConfig, Outbox, ownedDeps, stageService, subscribeGroup } from '@lead-capture/kit';
import { COLLECTIONS, type DedupeDoc, type SourceDoc, type SubmissionDoc } from './collections.js';
import { INTAKE_CONFIG, type IntakeConfig } from './config.js';
import { internalSourceRoutes } from './routes/internal/intake/sources.js';
import { submissionRoutes } from './routes/sources/submissions/index.js';
import { webhookRoutes } from './routes/webhooks/index.js';
import { SourceDirectory } from './sources/directory.js';
import { sourceEventsHandler } from './sources/source-events.js';
import { DedupeClaims } from './submissions/claims.js';
import { SubmissionIntake } from './submissions/intake.js';
import { leadLinkHandler } from './submissions/lead-link.js';
import { LeadgenFetcher } from './submissions/leadgen-fetcher.js';

/** The webhook and anything else under its prefix (answered 404 without a credential check). */
const WEBHOOK_PATH = /^\/api\/webhooks(\/|$)/;
const HOUR_MS = 3_600_000;

/**
 * The intake: the inbound webhook (public), the submissions log of a source, and the token read
 * model the source service keeps current. `config` comes from the environment unless given.
 */
export function createIntakeService(
  deps: ServiceDeps,
  config: IntakeConfig = loadConfig(INTAKE_CONFIG),
): ServiceModule {
  const { store, bus, logger, now } = ownedDeps(deps, 'intake', Object.values(COLLECTIONS));
  const submissions = store.collection<SubmissionDoc>(COLLECTIONS.submissions);
  const sources = new SourceDirectory(store.collection<SourceDoc>(COLLECTIONS.sources), now);
  const claims = new DedupeClaims(
    store.collection<DedupeDoc>(COLLECTIONS.dedupe),
    config.IDEMPOTENCY_WINDOW_HOURS * HOUR_MS,
  );
  const outbox = new Outbox({
    store,
    bus,
    logger,
    collection: COLLECTIONS.outbox,
    relayIntervalMs: config.OUTBOX_RELAY_INTERVAL_MS,
    takeOverAfterMs: config.OUTBOX_RELAY_AFTER_MS,
  });
  const retentionMs = config.SUBMISSION_RETENTION_DAYS * 24 * HOUR_MS;
  const intake = new SubmissionIntake({
    submissions,
    sources,
    claims,
    outbox,
    logger,
    retentionMs,
    maxRejectedPerSource: config.REJECTED_SUBMISSIONS_PER_SOURCE,
    leadgenGiveUpMs: config.LEADGEN_GIVE_UP_HOURS * HOUR_MS,
    now,
  });
  const leadgen = new LeadgenFetcher({
    submissions,
    sources,
    intake,
    logger,
    graphApiUrl: config.META_GRAPH_API_URL,
    intervalMs: config.LEADGEN_FETCH_INTERVAL_MS,
    timeoutMs: config.LEADGEN_FETCH_TIMEOUT_MS,
    retryBaseMs: config.LEADGEN_RETRY_BASE_MS,
    retryMaxMs: config.LEADGEN_RETRY_MAX_MS,
    now,
  });

  return stageService({
    name: 'intake',
    routePrefixes: ['/api/webhooks', '/api/sources/:sourceId/submissions'],
    isPublicRoute: (method, path) => ['POST', 'GET', 'HEAD'].includes(method) && WEBHOOK_PATH.test(path),

    async registerRoutes(app) {
      const bodyLimit = config.WEBHOOK_BODY_LIMIT_BYTES ?? config.BODY_LIMIT_BYTES;
      await app.register(webhookRoutes, {
        sources,
        intake,
        bodyLimit,
        bodyTimeoutMs: config.WEBHOOK_BODY_TIMEOUT_MS,
        now,
        foreground: bus.foreground,
      });
      await app.register(submissionRoutes, { intake });
      await app.register(internalSourceRoutes, { sources });
    },

    indexed: [sources, claims, outbox, intake, leadgen],
    relays: [outbox],
    consumers: [
      () => subscribeGroup(bus, 'intake.source.sync', sourceEventsHandler(sources)),
      () => subscribeGroup(bus, 'intake.lead.link', leadLinkHandler(submissions)),
    ],
    workers: [leadgen],
  });
}
