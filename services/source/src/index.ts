export { createSourceService, type SourceServiceOptions } from './service.js';
export { SOURCES_COLLECTION } from './sources.js';
export { USERS_COLLECTION } from './users.js';
