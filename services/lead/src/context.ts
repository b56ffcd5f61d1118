import type { MessageBus } from '@lead-capture/bus';
import type { Clock } from '@lead-capture/kit';
import type { LeadConfig } from './config.js';
import type { LeadCollections } from './store.js';

/** What the handlers and routes of the lead service share. */
export interface LeadContext {
  collections: LeadCollections;
  bus: MessageBus;
  config: LeadConfig;
  now: Clock;
  /**
   * The store's transactions are atomic (DocStore.transactional): a change's writes commit together,
   * so the capture writes a new lead once, final, with its event.
   */
  transactional: boolean;
}
