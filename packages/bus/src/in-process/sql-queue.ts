import type { SqlAccess, SqlStatements, Transaction } from '@lead-capture/docstore';
import {
  type DeliveryChange,
  type DeliveryDoc,
  type DeliveryState,
  deliveryId,
  deliverySeqOf,
  type GroupDoc,
  OPTIONAL_FIELDS,
} from './deliveries.js';

const STATES: readonly DeliveryState[] = ['pending', 'delayed', 'dead'];
const stateCode = (state: DeliveryState): number => STATES.indexOf(state);

/**
 * The in-process bus's queues, in tables of their own in the embedded store's SQLite file, beside the
 * collections and in the same commits (so a stage's change and the events it publishes commit
 * together). Every delivery lives here; the bus keeps only what its handlers are working on. A
 * delivery is one row of plain columns, its envelope's JSON as published: no document encoding, and
 * one index, (group, state, seq), which answers every read of the bus (the lead chain writes and
 * deletes 13 deliveries per lead). A read sees at least every write that resolved before it started;
 * it may or may not see writes still under way (the bus holds those deliveries meanwhile).
 *
 * A delivery's row id is the sequence it got when published (`deliveryId`), so its id stays the
 * same when a retry or a replay moves it to another position (`seq`).
 */
export class SqlQueueStore {
  readonly #sql: SqlAccess;
  readonly #name: string;
  readonly #deliveries: string;
  readonly #groups: string;
  readonly #insertSql = new Map<number, string>();
  #setUp: Promise<void> | null = null;

  /** `name` names the tables (`q:<name>:deliveries`, …): one set of queues per bus on a store. */
  constructor(sql: SqlAccess, name: string) {
    this.#sql = sql;
    this.#name = name;
    this.#deliveries = quoted(`q:${name}:deliveries`);
    this.#groups = quoted(`q:${name}:groups`);
  }

  /** Creates the tables unless they exist. */
  prepare(): Promise<void> {
    return this.#ready();
  }

  /** The tables exist (once per store, before any read). */
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
        `CREATE INDEX IF NOT EXISTS ${quoted(`q:${this.#name}:queue`)} ON ${this.#deliveries} (grp, state, seq)`,
      );
      sql.run(
        `CREATE TABLE IF NOT EXISTS ${this.#groups} (name TEXT PRIMARY KEY, types TEXT NOT NULL, updated_at TEXT NOT NULL)`,
      );
    });
  }

  /** Every group that subscribed once (or was declared): they keep receiving events. */
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

  /** Records a group that subscribed, so that it keeps receiving events across restarts. */
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

  /** The highest `seq` in the store (0 when empty), so sequences keep growing across restarts. */
  async maxSeq(): Promise<number> {
    const row = this.#sql.read((sql) => sql.get(`SELECT max(seq) FROM ${this.#deliveries}`));
    return Number(row?.[0] ?? 0);
  }

  /** Adds deliveries in one write; with `tx`, inside that transaction of the store. */
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

  /** The group's pending deliveries after `afterSeq`, in `seq` order. */
  async pending(group: string, afterSeq: number, limit: number): Promise<DeliveryDoc[]> {
    return this.#select(group, 'pending', afterSeq, Number.MAX_SAFE_INTEGER, limit);
  }

  /** The group's dead letters with `afterSeq` < seq < `beforeSeq`, in `seq` order. */
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

  /** Removes handled deliveries, in one write. */
  async remove(ids: string[], tx?: Transaction): Promise<void> {
    await this.#sql.execute(
      `DELETE FROM ${this.#deliveries} WHERE rid IN (SELECT value FROM json_each(?))`,
      [JSON.stringify(ids.map(deliverySeqOf))],
      tx,
    );
  }

  /** Moves a delivery (retry, dead letter, replay); false when it is not in `from` any more. */
  async move(id: string, from: DeliveryState, change: DeliveryChange, tx?: Transaction): Promise<boolean> {
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
      tx,
    );
    return changes === 1;
  }

  /** Turns the group's delayed deliveries due at `now` into pending ones; returns how many. */
  async promoteDue(group: string, now: number): Promise<number> {
    const { changes } = await this.#sql.execute(
      `UPDATE ${this.#deliveries} SET state = ? WHERE grp = ? AND state = ? AND available_at <= ?`,
      [stateCode('pending'), group, stateCode('delayed'), now],
    );
    return changes;
  }

  /** When the group's next delayed delivery is due; null when none waits. */
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

  /** How many of the group's deliveries are in `state` (metrics). */
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
