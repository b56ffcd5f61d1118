import { randomBytes } from 'node:crypto';
import type { DocStore, Document } from '@lead-capture/docstore';
import type { Identity, Logger } from '@lead-capture/kit';

export const AUDIT_LOG_COLLECTION = 'gateway_audit_log';

const DAY_MS = 86_400_000;

/** Waits before the 2nd and 3rd attempt to store an entry. */
const RETRY_DELAYS_MS = [50, 250] as const;

/** What the caller knows of a change; the log adds the id, the time and the expiry. */
export interface NewAuditEntry {
  action: string;
  /** The route as declared: `PUT /api/sequences/:id`. */
  route: string;
  /** The path that was called (no query string). */
  path: string;
  status: number;
  userId: string;
  authMethod: Identity['method'];
  apiKeyId: string | null;
  role: Identity['role'];
  ip: string;
  requestId: string;
  change: Record<string, unknown>;
}

export interface AuditEntryDoc extends Document, NewAuditEntry {
  _id: string;
  at: Date;
  /** A TTL index removes the entry after this date (AUDIT_LOG_RETENTION_DAYS after `at`). */
  expiresAt: Date;
}

export interface AuditEntryView {
  id: string;
  at: string;
  action: string;
  route: string;
  path: string;
  status: number;
  actor: { userId: string; method: Identity['method']; apiKeyId: string | null; role: Identity['role'] };
  ip: string;
  requestId: string;
  change: Record<string, unknown>;
}

export function toAuditEntryView(entry: AuditEntryDoc): AuditEntryView {
  return {
    id: entry._id,
    at: entry.at.toISOString(),
    action: entry.action,
    route: entry.route,
    path: entry.path,
    status: entry.status,
    actor: {
      userId: entry.userId,
      method: entry.authMethod,
      apiKeyId: entry.apiKeyId,
      role: entry.role,
    },
    ip: entry.ip,
    requestId: entry.requestId,
    change: entry.change,
  };
}

/**
 * UUIDv7-shaped ids (milliseconds, then a counter, then random bits) that sort in the order this
 * process wrote them, also within one millisecond: the tie-break of the newest-first list.
 */
export function createSortableIds(): (ms: number) => string {
  let lastMs = 0;
  let counter = 0;
  return (ms) => {
    if (ms > lastMs) {
      lastMs = ms;
      counter = 0;
    } else if (++counter > 0xfff) {
      lastMs += 1;
      counter = 0;
    }
    const bytes = randomBytes(16);
    bytes.writeUIntBE(lastMs, 0, 6);
    bytes[6] = 0x70 | (counter >> 8);
    bytes[7] = counter & 0xff;
    bytes[8] = (bytes[8]! & 0x3f) | 0x80;
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}

export interface AuditLogOptions {
  store: DocStore;
  logger: Logger;
  /** Days an entry is kept; applies to entries written from then on. */
  retentionDays: number;
  now?: () => number;
  /** Test seam: how a retry waits. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * `gateway_audit_log`: who changed what among the sensitive settings, newest first, each entry
 * removed by a TTL index after the retention. Only the gateway writes and reads it.
 */
export class AuditLog {
  readonly #entries;
  readonly #logger: Logger;
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #nextId = createSortableIds();

  constructor(options: AuditLogOptions) {
    this.#entries = options.store.collection<AuditEntryDoc>(AUDIT_LOG_COLLECTION);
    this.#logger = options.logger;
    this.#retentionMs = options.retentionDays * DAY_MS;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async ensureIndexes(): Promise<void> {
    await this.#entries.createIndex({ at: -1 });
    await this.#entries.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
  }

  /**
   * Stores an entry, trying three times. Resolves true once stored; false when every attempt
   * failed, after logging the whole entry at error level (`auditEntry`), so the record survives in
   * the log stream. Never rejects: the change it describes has already been made.
   */
  async record(entry: NewAuditEntry): Promise<boolean> {
    const at = new Date(this.#now());
    const doc: AuditEntryDoc = {
      _id: this.#nextId(at.getTime()),
      at,
      expiresAt: new Date(at.getTime() + this.#retentionMs),
      ...entry,
    };
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#entries.insertOne(doc);
        return true;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined) {
          this.#logger.error(
            { err: error, auditEntry: { ...doc, at: doc.at.toISOString(), expiresAt: undefined } },
            'Audit entry could not be stored; it is kept in this log line only',
          );
          return false;
        }
        this.#logger.warn(
          { reason, action: doc.action, requestId: doc.requestId, attempt: attempt + 1 },
          'Storing an audit entry failed; retrying',
        );
        await this.#sleep(delay);
      }
    }
  }

  /** Newest first. */
  async list(page: number, limit: number): Promise<{ entries: AuditEntryDoc[]; total: number }> {
    const [entries, total] = await Promise.all([
      this.#entries.find({}, { sort: { at: -1, _id: -1 }, skip: (page - 1) * limit, limit }),
      this.#entries.countDocuments({}),
    ]);
    return { entries, total };
  }
}
