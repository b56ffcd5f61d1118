export { loadNotificationConfig, NOTIFICATION_CONFIG, type NotificationConfig } from './config.js';
export { MAIL_STATUSES, MAILS_COLLECTION, type MailStatus } from './mails.js';
export {
  createNotificationService,
  NOTIFY_GROUP,
  type NotificationServiceOptions,
} from './service.js';
export { DEFAULT_SETTINGS, type NotificationSettings, SETTINGS_COLLECTION } from './settings.js';
