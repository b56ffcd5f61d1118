import type { OutboxRelayOptions, ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { ownedDeps, serviceOutbox, stageService, subscribeGroup } from '@lead-capture/kit';
import { workerMailer } from '@lead-capture/mailer';
import { loadNotificationConfig, type NotificationConfig } from './config.js';
import { MAILS_COLLECTION, type MailDocument, NotificationMails } from './mails.js';
import { createScoredHandler, NOTIFICATION_OUTBOX, NOTIFIED_RESULTS_COLLECTION } from './notifier.js';
import { mailRoutes } from './routes/notifications/index.js';
import { settingsRoutes } from './routes/settings/notifications.js';
import { SETTINGS_COLLECTION, type SettingsDocument, SettingsStore } from './settings.js';

export const NOTIFY_GROUP = 'notification.lead.notify';

/** Every collection the notification service owns: its store opens no other. */
export const NOTIFICATION_COLLECTIONS = [
  SETTINGS_COLLECTION,
  MAILS_COLLECTION,
  NOTIFIED_RESULTS_COLLECTION,
  NOTIFICATION_OUTBOX,
] as const;

export type NotificationServiceOptions = OutboxRelayOptions;

/**
 * Team notifications: the settings (`notification_settings`), every mail sent or not
 * (`notification_mails`), and the worker that turns lead.scored into mails and lead.notified (the
 * notifications of each lead.scored in `notification_results`, committed with the event through the
 * outbox `notification_outbox`).
 * `config` comes from the environment unless given.
 */
export function createNotificationService(
  deps: ServiceDeps,
  config: NotificationConfig = loadNotificationConfig(),
  options: NotificationServiceOptions = {},
): ServiceModule {
  const own = ownedDeps(deps, 'notification', NOTIFICATION_COLLECTIONS);
  const { store, logger, now } = own;
  const settings = new SettingsStore(store.collection<SettingsDocument>(SETTINGS_COLLECTION), now);
  const mails = new NotificationMails(
    store.collection<MailDocument>(MAILS_COLLECTION),
    config.NOTIFICATION_SEND_LEASE_MS,
  );
  const { mailer, checkAtStart } = workerMailer(config, logger, {
    recorded: 'team notifications',
    retried: 'notifications',
  });
  const outbox = serviceOutbox(own, NOTIFICATION_OUTBOX, options);
  const notifier = createScoredHandler({
    settings,
    mails,
    mailer,
    store,
    outbox,
    logger,
    publicBaseUrl: deps.publicBaseUrl,
    now,
  });

  return stageService({
    name: 'notification',
    routePrefixes: ['/api/settings/notifications', '/api/notifications'],

    async registerRoutes(app) {
      await app.register(settingsRoutes, { settings });
      await app.register(mailRoutes, { mails });
    },

    indexed: [mails, notifier, outbox],
    prepare: checkAtStart,
    relays: [outbox],
    consumers: [
      // Chained (in the capture's transaction) only while no mail goes over the network: an SMTP
      // round trip must not hold the store's writer. With SMTP_URL set, lead.scored is queued here.
      () =>
        subscribeGroup(
          own.bus,
          NOTIFY_GROUP,
          { 'lead.scored': notifier.handleScored },
          { chain: mailer.mode === 'outbox' },
        ),
    ],
    close: () => mailer.close(),
  });
}
