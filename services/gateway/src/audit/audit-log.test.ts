import type { DocStore } from '@lead-capture/docstore';
import { createLogger } from '@lead-capture/kit';
import { describe, expect, it } from 'vitest';
import { type AuditEntryDoc, AuditLog, createSortableIds, type NewAuditEntry } from './audit-log.js';

const ENTRY: NewAuditEntry = {
  action: 'notification_settings.replace',
  route: 'PUT /api/settings/notifications',
  path: '/api/settings/notifications',
  status: 200,
  userId: 'u-1',
  authMethod: 'api-key',
  apiKeyId: 'k-1',
  role: 'admin',
  ip: '203.0.113.9',
  requestId: 'req-1',
  change: { recipients: ['me@private.example'] },
};

/** A store whose inserts fail `failures` times, then succeed. */
function flakyStore(failures: number) {
  const inserted: AuditEntryDoc[] = [];
  let attempts = 0;
  const store = {
    collection: () => ({
      async insertOne(doc: AuditEntryDoc) {
        attempts += 1;
        if (attempts <= failures) throw new Error('disk I/O error');
        inserted.push(doc);
      },
    }),
  } as unknown as DocStore;
  return { store, inserted, attempts: () => attempts };
}

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'warn',
    name: 'audit-test',
    destination: { write: (line: string) => lines.push(JSON.parse(line)) },
  });
  return { logger, lines };
}

describe('AuditLog.record', () => {
  it('retries a failed insert and stores the entry once', async () => {
    const { store, inserted, attempts } = flakyStore(2);
    const { logger, lines } = capturedLogger();
    const log = new AuditLog({
      store,
      logger,
      retentionDays: 30,
      now: () => 1_700_000_000_000,
      sleep: async () => {},
    });
    expect(await log.record(ENTRY)).toBe(true);
    expect(attempts()).toBe(3);
    expect(inserted).toHaveLength(1);
    expect(inserted[0]).toMatchObject({ ...ENTRY, at: new Date(1_700_000_000_000) });
    expect(inserted[0]!.expiresAt.getTime()).toBe(1_700_000_000_000 + 30 * 86_400_000);
    expect(lines.map((line) => line.msg)).toEqual([
      'Storing an audit entry failed; retrying',
      'Storing an audit entry failed; retrying',
    ]);
  });

  it('never loses the record silently: after the last attempt the whole entry is in the error log', async () => {
    const { store, inserted } = flakyStore(Number.POSITIVE_INFINITY);
    const { logger, lines } = capturedLogger();
    const log = new AuditLog({ store, logger, retentionDays: 30, sleep: async () => {} });
    expect(await log.record(ENTRY)).toBe(false);
    expect(inserted).toEqual([]);
    const last = lines.at(-1)!;
    expect(last).toMatchObject({ level: 50, auditEntry: { ...ENTRY, at: expect.any(String) } });
  });
});

describe('createSortableIds', () => {
  it('orders ids in the order they were made, within one millisecond too', () => {
    const next = createSortableIds();
    const ids = [next(5), next(5), next(5), next(6), next(4), next(6)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
