export type { Identity } from './identity.js';
export type { ServiceDeps, ServiceFactory, ServiceModule } from './service.js';
