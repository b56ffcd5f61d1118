export { loadWebhooksConfig, WEBHOOKS_CONFIG, type WebhooksConfig } from './config.js';
export { createWebhooksService, DELIVER_GROUP, type WebhooksServiceOptions } from './service.js';
export {
  ATTEMPTS_COLLECTION,
  DELIVERIES_COLLECTION,
  LEAD_KEYS_COLLECTION,
  SUBSCRIBABLE_EVENTS,
  SUBSCRIPTIONS_COLLECTION,
} from './store.js';
