import type { Db, TableHost } from './host.js';
import type { TableLayout } from './layout.js';
import type { Condition } from './translate.js';

/** How many index entries a query plan first follows an equality for, unless the store says otherwise. */
export const PLAN_PROBE_ROWS = 2000;
/** How long a query plan's probe count is reused, and how many are kept per table. */
const PROBE_TTL_MS = 5000;
const MAX_PROBES = 200;

/**
 * Plans a conjunction of equalities on indexed columns that no one index covers
 * (`sourceId` and `qualification`, each with an index of its own). SQLite drives such a query by
 * one index and reads every row it yields to test the others; with no statistics it may well take
 * the one matching 50,000 rows, at 1.5-4 µs a row. So each equality is first followed through its
 * index, for at most `planProbeRows` entries, then (when none stopped short) five times as many;
 * the counts are kept for a few seconds (a list counts and then pages the same filter):
 * - the one matching the fewest drives, and the others are tested on its rows (their indexes
 *   disabled);
 * - when every one matches more than the longer probe, and an index leads with one of them and holds
 *   the others' columns further on (the lead list's indexes carry the other filters' columns after
 *   their sort key), that one drives and the others are tested on its index entries, not its rows;
 * - otherwise reading rows costs more than building sets: each equality but the first becomes a set
 *   of row ids read from its own index (~1 µs an entry), so the query reads index entries and the
 *   rows that match them all (a count reads no row).
 */
export class QueryPlanner {
  /** Recent probe counts, by cap, condition and parameters. */
  readonly #probes = new Map<string, { size: number; at: number }>();
  readonly #host: TableHost;
  readonly #layout: TableLayout;

  constructor(host: TableHost, layout: TableLayout) {
    this.#host = host;
    this.#layout = layout;
  }

  /** The condition as SQL should run it on `db`. */
  plan(db: Db, condition: Condition): Condition {
    const conjuncts = condition.conjuncts;
    const terms = conjuncts?.filter((part) => part.indexed);
    if (!conjuncts || !terms || terms.length < 2) return condition;
    const columns = new Set(terms.map((term) => term.indexed!.column));
    const indexes = this.#layout.sqlIndexColumns();
    const covered = indexes.some((index) => {
      const leading = new Set(index.slice(0, columns.size));
      return leading.size === columns.size && [...columns].every((column) => leading.has(column));
    });
    if (covered) return condition;
    // An equality on _id or a unique field matches one row at most: it drives, nothing to count.
    const unique = terms.find((term) => term.indexed?.unique);
    if (unique) return this.#driven(condition, conjuncts, unique, true);
    let cap = this.#host.planProbeRows;
    let sizes = this.#probe(db, terms, cap);
    if (Math.min(...sizes) >= cap) {
      cap *= 5;
      sizes = this.#probe(db, terms, cap);
    }
    const smallest = sizes.indexOf(Math.min(...sizes));
    if ((sizes[smallest] ?? cap) < cap) return this.#driven(condition, conjuncts, terms[smallest]!, true);
    // None is selective. An index that leads with one of them and holds the others' columns further on
    // answers them all from its entries: the smallest such one drives, the others are tested on its
    // entries (a count reads no row, a page reads only the rows it returns).
    const holding = terms
      .map((term, at) => ({ term, size: sizes[at]! }))
      .filter(({ term }) =>
        indexes.some(
          (index) => index[0] === term.indexed!.column && [...columns].every((c) => index.includes(c)),
        ),
      )
      .sort((a, b) => a.size - b.size);
    if (holding[0]) return this.#driven(condition, conjuncts, holding[0].term, true);
    return this.#driven(condition, conjuncts, terms[smallest]!, false);
  }

  /**
   * The condition driven by `driver`'s index: the other equalities tested on its rows (`selective`),
   * or each read as a set of row ids from its own index.
   */
  #driven(condition: Condition, conjuncts: Condition[], driver: Condition, selective: boolean): Condition {
    const sqlOf = (part: Condition): string => {
      if (!part.indexed || part === driver) return part.sql ?? '1';
      return selective
        ? part.indexed.unindexed
        : `rid IN (SELECT rid FROM ${this.#layout.rows} WHERE ${part.sql})`;
    };
    return { ...condition, sql: conjuncts.map((part) => `(${sqlOf(part)})`).join(' AND ') };
  }

  /**
   * How many rows each condition matches, counted through its index up to `cap`. A count is an
   * estimate for the plan only (a stale one costs time, never a wrong answer), so it is kept for
   * PROBE_TTL_MS.
   */
  #probe(db: Db, terms: Condition[], cap: number): number[] {
    const now = Date.now();
    return terms.map((term) => {
      const key = `${cap} ${term.sql} ${JSON.stringify(term.params)}`;
      const known = this.#probes.get(key);
      if (known && known.at > now - PROBE_TTL_MS) return known.size;
      const [size] = this.#host
        .statement(
          db,
          `SELECT COUNT(*) FROM (SELECT 1 FROM ${this.#layout.rows} WHERE ${term.sql} LIMIT ${cap})`,
        )
        .get(...term.params) as [number];
      if (this.#probes.size >= MAX_PROBES) this.#probes.clear();
      this.#probes.set(key, { size, at: now });
      return size;
    });
  }
}
