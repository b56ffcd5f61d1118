import type { OutboxRelayOptions, ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { ownedDeps, stageService } from '@lead-capture/kit';
import { sourceRoutes } from './routes/sources/index.js';
import { SOURCE_OUTBOX, SOURCES_COLLECTION, Sources } from './sources.js';
import { USERS_COLLECTION, UserDirectory } from './users.js';

/** Every collection the source service owns: its store opens no other. */
export const SOURCE_COLLECTIONS = [SOURCES_COLLECTION, USERS_COLLECTION, SOURCE_OUTBOX] as const;

export type SourceServiceOptions = OutboxRelayOptions;

/**
 * Sources, their webhook tokens and field mappings (`source_sources`), and the `user.*` read model
 * that names their creators (`source_users`). Publishes source.created / updated / token_rotated /
 * deleted; tells the intake of every change synchronously as well.
 */
export function createSourceService(deps: ServiceDeps, options: SourceServiceOptions = {}): ServiceModule {
  const relayIntervalMs = options.relayIntervalMs ?? 5000;
  const own = ownedDeps(deps, 'source', SOURCE_COLLECTIONS);
  const users = new UserDirectory(own);
  const sources = new Sources(own, users, relayIntervalMs);

  return stageService({
    name: 'source',
    routePrefixes: ['/api/sources'],
    async registerRoutes(app) {
      await app.register(sourceRoutes, { sources, users, publicBaseUrl: deps.publicBaseUrl });
    },
    indexed: [sources],
    relays: [sources.outbox],
    consumers: [() => users.subscribe()],
  });
}
