import type { Subscription } from '@lead-capture/bus';
import { type ServiceDeps, type ServiceModule, subscribeGroup } from '@lead-capture/kit';
import { createMailer, DEFAULT_MAIL_FROM } from '@lead-capture/mailer';
import { loadNotificationConfig, type NotificationConfig } from './config.js';
import { MAILS_COLLECTION, type MailDocument, NotificationMails } from './mails.js';
import { createScoredHandler } from './notifier.js';
import { mailRoutes } from './routes/notifications/index.js';
import { settingsRoutes } from './routes/settings/notifications.js';
import { SETTINGS_COLLECTION, type SettingsDocument, SettingsStore } from './settings.js';

export const NOTIFY_GROUP = 'notification.lead.notify';

export interface NotificationServiceOptions {
  /** The clock of mail claims and records (tests move it past a lease). */
  now?: () => Date;
}

/**
 * Team notifications: the settings (`notification_settings`), every mail sent or not
 * (`notification_mails`), and the worker that turns lead.scored into mails and lead.notified.
 * `config` comes from the environment unless given.
 */
export function createNotificationService(
  deps: ServiceDeps,
  config: NotificationConfig = loadNotificationConfig(),
  options: NotificationServiceOptions = {},
): ServiceModule {
  const { store, bus, logger } = deps;
  const now = options.now ?? (() => new Date());
  const settings = new SettingsStore(store.collection<SettingsDocument>(SETTINGS_COLLECTION));
  const mails = new NotificationMails(
    store.collection<MailDocument>(MAILS_COLLECTION),
    config.NOTIFICATION_SEND_LEASE_MS,
  );
  const mailer = createMailer({ smtpUrl: config.SMTP_URL, from: config.MAIL_FROM, logger });
  let subscription: Subscription | undefined;

  return {
    name: 'notification',
    routePrefixes: ['/api/settings/notifications', '/api/notifications'],

    async registerRoutes(app) {
      await app.register(settingsRoutes, { settings });
      await app.register(mailRoutes, { mails });
    },

    async start() {
      await mails.createIndexes();
      if (mailer.mode === 'outbox') {
        logger.warn('SMTP_URL is not set: team notifications are recorded as "outbox" and not sent');
      } else {
        if (config.MAIL_FROM === DEFAULT_MAIL_FROM) {
          logger.warn('MAIL_FROM is not set: SMTP servers will refuse the placeholder sender');
        }
        // Mail waits for the server (the bus retries) rather than keeping the worker from starting.
        await mailer.verify().catch((error: unknown) => {
          logger.warn({ err: error }, 'The SMTP server cannot be reached yet; notifications will be retried');
        });
      }
      subscription = await subscribeGroup(
        bus,
        NOTIFY_GROUP,
        createScoredHandler({
          settings,
          mails,
          mailer,
          bus,
          logger,
          publicBaseUrl: deps.publicBaseUrl,
          now,
        }),
      );
    },

    async stop() {
      await subscription?.cancel();
      mailer.close();
    },
  };
}
