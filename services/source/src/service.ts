import type { Subscription } from '@lead-capture/bus';
import type { ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { sourceRoutes } from './routes/sources/index.js';
import { Sources } from './sources.js';
import { UserDirectory } from './users.js';

export interface SourceServiceOptions {
  /** How often the outbox relay looks for events a request could not publish, and how old they must be. Default 5 s. */
  relayIntervalMs?: number;
}

/**
 * Sources, their webhook tokens and field mappings (`source_sources`), and the `user.*` read model
 * that names their creators (`source_users`). Publishes source.created / updated / token_rotated /
 * deleted; tells the intake of every change synchronously as well.
 */
export function createSourceService(deps: ServiceDeps, options: SourceServiceOptions = {}): ServiceModule {
  const relayIntervalMs = options.relayIntervalMs ?? 5000;
  const users = new UserDirectory(deps);
  const sources = new Sources(deps, users, relayIntervalMs);
  let subscription: Subscription | undefined;

  return {
    name: 'source',
    routePrefixes: ['/api/sources'],
    async registerRoutes(app) {
      await app.register(sourceRoutes, { sources, users, publicBaseUrl: deps.publicBaseUrl });
    },
    async start() {
      await sources.createIndexes();
      subscription = await users.subscribe();
      sources.outbox.start();
    },
    async stop() {
      await sources.outbox.stop();
      await subscription?.cancel();
    },
  };
}
