import type { Collection, DocStore, SqlAccess, SqlStatements, Transaction } from '@lead-capture/docstore';
import {
  type DeliveryChange,
  type DeliveryDoc,
  type DeliveryState,
  deliveryId,
  deliverySeqOf,
  type GroupDoc,
  OPTIONAL_FIELDS,
  type QueueStore,
  readDelivery,
} from './journal.js';

const STATES: readonly DeliveryState[] = ['pending', 'delayed', 'dead'];
const stateCode = (state: DeliveryState): number => STATES.indexOf(state);

/** Legacy journal documents moved into the tables per transaction. */
const MIGRATION_PAGE = 1000;

/**
 * The in-process bus's queues in tables of their own in the embedded store's SQLite file, beside the
 * collections and in the same commits (so a stage's change and the events it publishes commit
 * together). A delivery is one row of plain columns, its envelope's JSON as published: no document
 * encoding, and one index, (group, state, seq), which answers every read of the bus. Where the journal
 * is a docstore collection (JournalStore) each delivery cost a JSON document, four index entries and
 * the query layer; the lead chain writes and deletes 13 deliveries per lead.
 *
 * A delivery's row id is the sequence it got when published (`deliveryId`), so its id stays the
 * same when a retry or a replay moves it to another position (`seq`).
 */
export class SqlQueueStore implements QueueStore {
  readonly #sql: SqlAccess;
  readonly #store: DocStore;
  readonly #legacy: Collection;
  readonly #deliveries: string;
  readonly #groups: string;
  readonly #insertSql = new Map<number, string>();
  #setUp: Promise<void> | null = null;

  /**
   * `legacy`: the collection an older version kept the journal in (its name also names the
   * tables); what it holds moves into the tables on `prepare`.
   */
  constructor(sql: SqlAccess, store: DocStore, legacy: Collection) {
    this.#sql = sql;
    this.#store = store;
    this.#legacy = legacy;
    this.#deliveries = quoted(`q:${legacy.name}:deliveries`);
    this.#groups = quoted(`q:${legacy.name}:groups`);
  }

  prepare(): Promise<void> {
    return this.#ready();
  }

  /** The tables exist and hold what the legacy collection held (once per store, before any read). */
  #ready(): Promise<void> {
    this.#setUp ??= this.#setUpTables();
    return this.#setUp;
  }

  async #setUpTables(): Promise<void> {
    await this.#sql.write((sql) => {
      sql.run(
        `CREATE TABLE IF NOT EXISTS ${this.#deliveries} (
          rid INTEGER PRIMARY KEY, grp TEXT NOT NULL, state INTEGER NOT NULL, seq INTEGER NOT NULL,
          attempt INTEGER NOT NULL, available_at INTEGER NOT NULL, body TEXT NOT NULL, info TEXT)`,
      );
      sql.run(
        `CREATE INDEX IF NOT EXISTS ${quoted(`q:${this.#legacy.name}:queue`)} ON ${this.#deliveries} (grp, state, seq)`,
      );
      sql.run(
        `CREATE TABLE IF NOT EXISTS ${this.#groups} (name TEXT PRIMARY KEY, types TEXT NOT NULL, updated_at TEXT NOT NULL)`,
      );
    });
    await this.#migrateLegacy(Date.now());
  }

  /**
   * Moves what the journal collection of an older version holds into the tables, a page per
   * transaction: a crash leaves the rest in the collection for the next start, nothing twice.
   */
  async #migrateLegacy(now: number): Promise<void> {
    for (;;) {
      const docs = await this.#legacy.find({}, { limit: MIGRATION_PAGE });
      if (docs.length === 0) return;
      await this.#store.transaction(async (tx) => {
        const groups = docs.filter((doc) => doc.kind === 'group') as unknown as GroupDoc[];
        const deliveries = docs.filter((doc) => doc.kind !== 'group').map(readDelivery);
        for (const delivery of deliveries) {
          // A journal written before delayed retries had a state of their own kept them as pending.
          if (delivery.state === 'pending' && delivery.availableAt > now) delivery.state = 'delayed';
        }
        await this.#sql.write((sql) => {
          for (const group of groups) this.#upsertGroup(sql, group.group, group.types, group.updatedAt);
          for (const delivery of deliveries) {
            // Its position was unique among the journal's deliveries: it becomes the row id.
            sql.run(this.#insertStatement(1), rowOf(delivery, delivery.seq));
          }
        }, tx);
        await tx.collection(this.#legacy.name).deleteMany({ _id: { $in: docs.map((doc) => doc._id) } });
      });
    }
  }

  async groups(): Promise<GroupDoc[]> {
    await this.#ready();
    return this.#sql.read((sql) =>
      sql.all(`SELECT name, types, updated_at FROM ${this.#groups}`).map(([name, types, updatedAt]) => ({
        _id: `group:${String(name)}`,
        kind: 'group' as const,
        group: String(name),
        types: JSON.parse(String(types)) as string[],
        updatedAt: String(updatedAt),
      })),
    );
  }

  async saveGroup(group: string, types: string[]): Promise<void> {
    await this.#sql.write((sql) => this.#upsertGroup(sql, group, types, new Date().toISOString()));
  }

  #upsertGroup(sql: SqlStatements, group: string, types: string[], updatedAt: string): void {
    sql.run(
      `INSERT INTO ${this.#groups} (name, types, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET types = excluded.types, updated_at = excluded.updated_at`,
      [group, JSON.stringify(types), updatedAt],
    );
  }

  async maxSeq(): Promise<number> {
    const row = this.#sql.read((sql) => sql.get(`SELECT max(seq) FROM ${this.#deliveries}`));
    return Number(row?.[0] ?? 0);
  }

  async insert(deliveries: DeliveryDoc[], tx?: Transaction): Promise<void> {
    if (deliveries.length === 0) return;
    const params = deliveries.flatMap((delivery) => rowOf(delivery, deliverySeqOf(delivery._id)));
    // One statement, atomic on its own: every group's delivery of the event or none.
    await this.#sql.execute(this.#insertStatement(deliveries.length), params, tx);
  }

  #insertStatement(rows: number): string {
    let sql = this.#insertSql.get(rows);
    if (!sql) {
      const values = Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
      sql = `INSERT INTO ${this.#deliveries} (rid, grp, state, seq, attempt, available_at, body, info) VALUES ${values}`;
      if (this.#insertSql.size < 64) this.#insertSql.set(rows, sql);
    }
    return sql;
  }

  async pending(group: string, afterSeq: number, limit: number): Promise<DeliveryDoc[]> {
    return this.#select(group, 'pending', afterSeq, Number.MAX_SAFE_INTEGER, limit);
  }

  async dead(
    group: string,
    limit: number,
    afterSeq = 0,
    beforeSeq = Number.MAX_SAFE_INTEGER,
  ): Promise<DeliveryDoc[]> {
    return this.#select(group, 'dead', afterSeq, beforeSeq, limit);
  }

  #select(
    group: string,
    state: DeliveryState,
    afterSeq: number,
    beforeSeq: number,
    limit: number,
  ): DeliveryDoc[] {
    const rows = this.#sql.read((sql) =>
      sql.all(
        `SELECT rid, seq, attempt, available_at, body, info FROM ${this.#deliveries}
         WHERE grp = ? AND state = ? AND seq > ? AND seq < ? ORDER BY seq LIMIT ?`,
        [group, stateCode(state), afterSeq, beforeSeq, limit],
      ),
    );
    return rows.map(([rid, seq, attempt, availableAt, body, info]) => ({
      _id: deliveryId(Number(rid)),
      kind: 'delivery',
      group,
      seq: Number(seq),
      state,
      body: String(body),
      attempt: Number(attempt),
      availableAt: Number(availableAt),
      ...(info === null ? {} : (JSON.parse(String(info)) as Partial<DeliveryDoc>)),
    }));
  }

  async remove(ids: string[]): Promise<void> {
    await this.#sql.execute(`DELETE FROM ${this.#deliveries} WHERE rid IN (SELECT value FROM json_each(?))`, [
      JSON.stringify(ids.map(deliverySeqOf)),
    ]);
  }

  async move(id: string, from: DeliveryState, change: DeliveryChange): Promise<boolean> {
    const { changes } = await this.#sql.execute(
      `UPDATE ${this.#deliveries} SET seq = ?, state = ?, attempt = ?, available_at = ?, info = ?
       WHERE rid = ? AND state = ?`,
      [
        change.seq,
        stateCode(change.state),
        change.attempt,
        change.availableAt,
        infoOf(change),
        deliverySeqOf(id),
        stateCode(from),
      ],
    );
    return changes === 1;
  }

  async promoteDue(group: string, now: number): Promise<number> {
    const { changes } = await this.#sql.execute(
      `UPDATE ${this.#deliveries} SET state = ? WHERE grp = ? AND state = ? AND available_at <= ?`,
      [stateCode('pending'), group, stateCode('delayed'), now],
    );
    return changes;
  }

  async nextDueAt(group: string): Promise<number | null> {
    const row = this.#sql.read((sql) =>
      sql.get(`SELECT min(available_at) FROM ${this.#deliveries} WHERE grp = ? AND state = ?`, [
        group,
        stateCode('delayed'),
      ]),
    );
    return row?.[0] === null || row?.[0] === undefined ? null : Number(row[0]);
  }

  async ping(): Promise<void> {
    this.#sql.read((sql) => sql.get('SELECT 1'));
  }

  async count(group: string, state: DeliveryState): Promise<number> {
    const row = this.#sql.read((sql) =>
      sql.get(`SELECT count(*) FROM ${this.#deliveries} WHERE grp = ? AND state = ?`, [
        group,
        stateCode(state),
      ]),
    );
    return Number(row?.[0] ?? 0);
  }
}

function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The optional fields a delivery carries, as JSON; null when it carries none. */
function infoOf(delivery: Partial<DeliveryDoc>): string | null {
  const info: Record<string, unknown> = {};
  for (const key of OPTIONAL_FIELDS) if (delivery[key] !== undefined) info[key] = delivery[key];
  return Object.keys(info).length > 0 ? JSON.stringify(info) : null;
}

function rowOf(delivery: DeliveryDoc, rid: number): (string | number | null)[] {
  return [
    rid,
    delivery.group,
    stateCode(delivery.state),
    delivery.seq,
    delivery.attempt,
    delivery.availableAt,
    delivery.body,
    infoOf(delivery),
  ];
}
