export { type EmbeddedStoreOptions, openEmbeddedStore } from './embedded/open.js';
export type { EmbeddedDocStore } from './embedded/store.js';
export type { StoreLogger } from './logger.js';
export { type MongoStoreOptions, openMongoStore } from './mongodb/store.js';
export { type OpenStoreOptions, openStore } from './open-store.js';
export { ForeignCollectionError, scopeStore, unscopedStore, unscopedTransaction } from './scoped.js';
export * from './types.js';
