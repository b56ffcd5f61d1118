import type { Db } from './host.js';
import type { IndexDefinition } from './indexes.js';

/** A collection as the catalog table keeps it. */
export interface CatalogEntry {
  name: string;
  indexes: IndexDefinition[];
  /** Type flags (see values.ts) of every indexed path, and of _id. */
  types: Record<string, number>;
  /** The paths that have a multikey element table (see TableLayout.field). */
  elements: string[];
  /** The indexed paths that have a column of their own (see TableLayout.field). */
  columns: string[];
}

/** Every collection the catalog table knows. */
export function readCatalog(db: Db): CatalogEntry[] {
  return (
    db.prepare('SELECT name, indexes, types, elements, columns FROM catalog').raw().all() as string[][]
  ).map(
    ([name, indexes, types, elements, columns]): CatalogEntry => ({
      name: name!,
      indexes: JSON.parse(indexes!),
      types: JSON.parse(types!),
      elements: JSON.parse(elements!),
      columns: JSON.parse(columns!),
    }),
  );
}
