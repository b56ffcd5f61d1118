import { openEmbeddedStore } from './embedded/open.js';
import type { StoreLogger } from './logger.js';
import { openMongoStore } from './mongodb/store.js';
import type { DocStore } from './types.js';

export interface OpenStoreOptions {
  /** Where the embedded store keeps its files; unused with MongoDB. */
  dataDir: string;
  logger?: StoreLogger;
}

/**
 * A `mongodb://` or `mongodb+srv://` URL opens MongoDB; no URL (undefined or empty) opens the embedded
 * store under `dataDir`. Any other URL is a configuration mistake and is refused, rather than quietly
 * running on local files.
 */
export async function openStore(url: string | undefined, options: OpenStoreOptions): Promise<DocStore> {
  if (!url) return openEmbeddedStore({ dataDir: options.dataDir, logger: options.logger });
  if (/^mongodb(\+srv)?:\/\//.test(url)) return openMongoStore(url, { logger: options.logger });
  throw new Error(`Unsupported docstore URL "${url.split(':')[0]}:…": expected mongodb:// or mongodb+srv://`);
}
