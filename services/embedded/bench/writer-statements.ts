import type { EmbeddedDocStore } from '@lead-capture/docstore';

/** What the bench needs of a statement of the embedded store's libsql connection. */
type TimedStatement = Record<'run' | 'get' | 'all' | 'iterate', (...args: unknown[]) => unknown>;
interface WriterConnection {
  prepare(sql: string): TimedStatement;
  exec(sql: string): unknown;
}

/**
 * Times every SQL call on the embedded store's writer connection (statements and exec: BEGIN, COMMIT,
 * savepoints), in µs. SQLite lets one connection write at a time, so this is what any design on one
 * SQLite file must run one call after another, whatever else moves to other threads: 10^6 divided
 * by it per lead is that writer's ceiling in leads per second. The writer's cached statements are
 * dropped first, so every one is prepared (and wrapped) anew; `all` runs `iterate` inside, which is
 * counted once. The timer costs ~0.1 µs a call, about 10 µs per lead.
 */
export function timeWriterStatements(store: EmbeddedDocStore): {
  micros: () => number;
  callsBySql: Map<string, { calls: number; nanos: bigint }>;
} {
  const writer = store.writer as unknown as WriterConnection;
  let nanos = 0n;
  let depth = 0;
  const bySql = new Map<string, { calls: number; nanos: bigint }>();
  const timed =
    <A extends unknown[], R>(call: (...args: A) => R, sqlOf: (...args: A) => string) =>
    (...args: A): R => {
      if (depth++ > 0) {
        try {
          return call(...args);
        } finally {
          depth--;
        }
      }
      const started = process.hrtime.bigint();
      try {
        return call(...args);
      } finally {
        depth--;
        const took = process.hrtime.bigint() - started;
        nanos += took;
        const sql = sqlOf(...args);
        const entry = bySql.get(sql) ?? { calls: 0, nanos: 0n };
        entry.nanos += took;
        bySql.set(sql, entry);
      }
    };
  const prepare = writer.prepare.bind(writer);
  writer.prepare = (sql) => {
    const statement = prepare(sql);
    const ofThis = (..._args: unknown[]) => sql;
    for (const method of ['run', 'get', 'all'] as const) {
      const call = timed(statement[method].bind(statement), ofThis);
      statement[method] = (...args) => {
        const entry = bySql.get(sql) ?? { calls: 0, nanos: 0n };
        entry.calls++;
        bySql.set(sql, entry);
        return call(...args);
      };
    }
    // An iteration reads its rows in its next() calls (100 at a time), after iterate() returned.
    const iterate = timed(statement.iterate.bind(statement), ofThis);
    statement.iterate = (...args) => {
      const iterator = iterate(...args) as { next: () => unknown };
      if (depth === 0) iterator.next = timed(iterator.next.bind(iterator), ofThis);
      return iterator;
    };
    return statement;
  };
  writer.exec = timed(writer.exec.bind(writer), (sql) => sql);
  store.forget(store.writer);
  return { micros: () => Number(nanos / 1000n), callsBySql: bySql };
}

/** Every statement the writer ran, the costliest first, with its calls and µs per lead. */
export function printStatementBreakdown(
  callsBySql: Map<string, { calls: number; nanos: bigint }>,
  leads: number,
): void {
  const rows = [...callsBySql].sort((a, b) => Number(b[1].nanos - a[1].nanos));
  console.log('calls per lead\tµs per lead\tstatement');
  for (const [sql, { calls, nanos }] of rows) {
    const micros = Number(nanos / 1000n) / leads;
    console.log(`${(calls / leads).toFixed(2)}\t${micros.toFixed(1)}\t${sql.slice(0, 140)}`);
  }
}
