import type { ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { ownedDeps, stageService, subscribeGroup } from '@lead-capture/kit';
import { createMailer, DEFAULT_MAIL_FROM } from '@lead-capture/mailer';
import { loadWebhooksConfig, type WebhooksConfig } from './config.js';
import { DeliveryDispatcher } from './dispatcher.js';
import { createFanOutHandler } from './fan-out.js';
import { createLeadReader } from './lead-detail.js';
import { CREATOR_SYNC_GROUP, createCreatorHandler } from './pausing.js';
import { subscriptionRoutes } from './routes/webhook-subscriptions/index.js';
import type { sendWebhook } from './sender.js';
import {
  ATTEMPTS_COLLECTION,
  CREATORS_COLLECTION,
  createIndexes,
  DELIVERIES_COLLECTION,
  LEAD_KEYS_COLLECTION,
  SUBSCRIPTIONS_COLLECTION,
  webhookCollections,
} from './store.js';
import { SubscriptionCatalog } from './subscriptions.js';
import type { ResolvedAddress } from './target.js';

export const DELIVER_GROUP = 'webhooks.lead.deliver';

/** Every collection the webhooks service owns: its store opens no other. */
export const WEBHOOKS_COLLECTIONS = [
  SUBSCRIPTIONS_COLLECTION,
  DELIVERIES_COLLECTION,
  ATTEMPTS_COLLECTION,
  LEAD_KEYS_COLLECTION,
  CREATORS_COLLECTION,
] as const;
/**
 * Deliveries of one event before it is dead-lettered: with the bus's backoff (1 s, 5 s, 25 s, 2 min,
 * then every 10 min) the lead service may be unreachable for about 70 minutes without an event
 * being set aside (an operator replays dead letters from /api/admin/dead-letters).
 */
export const DELIVER_MAX_ATTEMPTS = 12;

export interface WebhooksServiceOptions {
  /** The jitter of the backoff, in [0, 1). */
  random?: () => number;
  /** The resolver of target host names (tests point a name at 127.0.0.1). */
  resolve?: (host: string) => Promise<ResolvedAddress[]>;
  /** How long a claimed delivery is held; default twice the attempt timeout plus 30 s. */
  leaseMs?: number;
  /** Called after each delivery pass has ended: tests wait on passes instead of sleeping. */
  onDispatchPass?: () => void;
  /** Wraps the HTTP sender (tests observe attempts). */
  send?: typeof sendWebhook;
  /** The bus's delay before retry N of an event (tests shorten the wait for the lead service). */
  eventRetryDelayMs?: (retry: number) => number;
}

/**
 * Outbound webhooks: the subscriptions (`webhooks_subscriptions`), the deliveries
 * (`webhooks_deliveries`) and their attempts (`webhooks_attempts`), and what the filters need of
 * deleted leads (`webhooks_lead_keys`). Consumes lead events, reads each lead from the lead service
 * (`GET /internal/lead/leads/<id>`), records a delivery per matching subscription, and attempts due
 * deliveries from a scheduler in start(). `config` comes from the environment unless given.
 */
export function createWebhooksService(
  deps: ServiceDeps,
  config: WebhooksConfig = loadWebhooksConfig(),
  options: WebhooksServiceOptions = {},
): ServiceModule {
  const { store, bus, logger, now } = ownedDeps(deps, 'webhooks', WEBHOOKS_COLLECTIONS);
  const collections = webhookCollections(store);
  const policy = {
    allowHttp: config.OUTBOUND_WEBHOOK_ALLOW_HTTP,
    allowPrivate: config.OUTBOUND_WEBHOOK_ALLOW_PRIVATE,
  };
  const mailer = createMailer({ smtpUrl: config.SMTP_URL, from: config.MAIL_FROM, logger });
  const hour = 60 * 60_000;
  const dispatcher = new DeliveryDispatcher({
    collections,
    mailer,
    logger,
    now,
    random: options.random,
    sender: {
      ...policy,
      timeoutMs: config.OUTBOUND_WEBHOOK_TIMEOUT_MS,
      ...(options.resolve ? { resolve: options.resolve } : {}),
    },
    intervalMs: config.OUTBOUND_WEBHOOK_TICK_MS,
    concurrency: config.OUTBOUND_WEBHOOK_CONCURRENCY,
    leaseMs: options.leaseMs ?? 2 * config.OUTBOUND_WEBHOOK_TIMEOUT_MS + 30_000,
    retryWindowMs: config.OUTBOUND_WEBHOOK_RETRY_HOURS * hour,
    maxAttempts: config.OUTBOUND_WEBHOOK_MAX_ATTEMPTS,
    disableAfterMs: config.OUTBOUND_WEBHOOK_DISABLE_AFTER_HOURS * hour,
    onPass: options.onDispatchPass,
    send: options.send,
  });
  const catalog = new SubscriptionCatalog(collections, dispatcher, {
    policy,
    secretOverlapMs: config.OUTBOUND_WEBHOOK_SECRET_OVERLAP_HOURS * hour,
    now,
  });
  const fanOut = createFanOutHandler({
    store,
    logger,
    now,
    readLead: createLeadReader(deps.internal),
    onDeliveries: () => dispatcher.wake(),
  });

  return stageService({
    name: 'webhooks',
    routePrefixes: ['/api/webhook-subscriptions'],

    async registerRoutes(app) {
      await app.register(subscriptionRoutes, { catalog, now });
    },

    async prepare() {
      await createIndexes(collections, config.OUTBOUND_WEBHOOK_LOG_RETENTION_DAYS);
      if (policy.allowHttp || policy.allowPrivate) {
        logger.warn(policy, 'Outbound webhooks may go to http or private targets: for development only');
      }
      if (mailer.mode === 'smtp' && config.MAIL_FROM === DEFAULT_MAIL_FROM) {
        logger.warn('MAIL_FROM is not set: SMTP servers will refuse the placeholder sender');
      }
    },
    consumers: [
      // Every lead event the same way: what differs between them is read from the event.
      () =>
        subscribeGroup(
          bus,
          DELIVER_GROUP,
          {
            'lead.captured': fanOut,
            'lead.scored': fanOut,
            'lead.updated': fanOut,
            'lead.deleted': fanOut,
            'lead.merged': fanOut,
            'lead.enrolled': fanOut,
          },
          {
            maxAttempts: DELIVER_MAX_ATTEMPTS,
            ...(options.eventRetryDelayMs ? { retryDelayMs: options.eventRetryDelayMs } : {}),
          },
        ),
      () => subscribeGroup(bus, CREATOR_SYNC_GROUP, createCreatorHandler({ collections, logger, now })),
    ],
    workers: [dispatcher],
    close: () => mailer.close(),
  });
}
