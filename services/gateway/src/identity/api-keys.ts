import { randomUUID } from 'node:crypto';
import type { DocStore, Document } from '@lead-capture/docstore';
import type { Logger } from '@lead-capture/kit';
import { hashOfToken, newOpaqueToken, OPAQUE_TOKEN_PATTERN } from './opaque-tokens.js';

/**
 * API keys: `lck_` + an opaque token (opaque-tokens.ts), shown once; stored as its hash and looked
 * up by it. A key acts as the user who created it, with the key's scope.
 */
export const API_KEYS_COLLECTION = 'gateway_api_keys';

export type ApiKeyScope = 'read' | 'full';

export interface ApiKeyDoc extends Document {
  label: string;
  keyHash: string;
  /** Shown in lists so a person can tell keys apart: `lck_` and the next 8 characters. */
  prefix: string;
  scope: ApiKeyScope;
  active: boolean;
  expiresAt: string | null;
  createdAt: string;
  /** User id of the admin who created it; the key acts as that user. */
  createdBy: string;
  lastUsedAt: string | null;
}

/** A key as the API shows it: every field but its hash. */
export function toPublicApiKey(key: ApiKeyDoc) {
  const { _id, label, prefix, scope, active, expiresAt, createdAt, createdBy, lastUsedAt } = key;
  return { id: _id, label, prefix, scope, active, expiresAt, createdAt, createdBy, lastUsedAt };
}

export type PublicApiKey = ReturnType<typeof toPublicApiKey>;

export const API_KEY_PREFIX = 'lck_';
const DISPLAY_CHARACTERS = 8;
const KEY_SHAPE = new RegExp(`^${API_KEY_PREFIX}${OPAQUE_TOKEN_PATTERN}$`);
/** lastUsedAt is written at most this often per key, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

export class ApiKeys {
  readonly #keys;
  readonly #now: () => number;
  readonly #logger: Logger;

  constructor(options: { store: DocStore; logger: Logger; now?: () => number }) {
    this.#keys = options.store.collection<ApiKeyDoc>(API_KEYS_COLLECTION);
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
  }

  async ensureIndexes(): Promise<void> {
    await this.#keys.createIndex({ keyHash: 1 }, { unique: true });
  }

  /** The stored record and the full key, which is not kept anywhere. */
  async create(input: {
    label: string;
    scope: ApiKeyScope;
    expiresAt: string | null;
    createdBy: string;
  }): Promise<{ record: ApiKeyDoc; key: string }> {
    const key = `${API_KEY_PREFIX}${newOpaqueToken()}`;
    const record: ApiKeyDoc = {
      _id: randomUUID(),
      label: input.label.trim(),
      keyHash: hashOfToken(key),
      prefix: key.slice(0, API_KEY_PREFIX.length + DISPLAY_CHARACTERS),
      scope: input.scope,
      active: true,
      expiresAt: input.expiresAt,
      createdAt: new Date(this.#now()).toISOString(),
      createdBy: input.createdBy,
      lastUsedAt: null,
    };
    await this.#keys.insertOne(record);
    return { record, key };
  }

  list(): Promise<ApiKeyDoc[]> {
    return this.#keys.find({}, { sort: { createdAt: -1 } });
  }

  update(id: string, changes: { label?: string; active?: boolean }): Promise<ApiKeyDoc | null> {
    const set: Partial<ApiKeyDoc> = {};
    if (changes.label !== undefined) set.label = changes.label.trim();
    if (changes.active !== undefined) set.active = changes.active;
    return this.#keys.findOneAndUpdate({ _id: id }, { $set: set });
  }

  async remove(id: string): Promise<boolean> {
    return (await this.#keys.deleteOne({ _id: id })).deletedCount === 1;
  }

  /** The key's record when it exists, is active and has not expired; null otherwise. */
  async authenticate(key: string): Promise<ApiKeyDoc | null> {
    if (!KEY_SHAPE.test(key)) return null;
    const record = await this.#keys.findOne({ keyHash: hashOfToken(key) });
    const now = this.#now();
    if (!record?.active) return null;
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= now) return null;
    this.#noteUse(record, now);
    return record;
  }

  /** The key with this id when it still exists, is active and has not expired (a live stream's check). */
  async findUsable(id: string): Promise<ApiKeyDoc | null> {
    const record = await this.#keys.findOne({ _id: id });
    if (!record?.active) return null;
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= this.#now()) return null;
    return record;
  }

  /** Fire and forget: a failed bookkeeping write must not fail the request it belongs to. */
  #noteUse(record: ApiKeyDoc, now: number): void {
    if (record.lastUsedAt !== null && now - Date.parse(record.lastUsedAt) < LAST_USED_RESOLUTION_MS) return;
    const lastUsedAt = new Date(now).toISOString();
    this.#keys.updateOne({ _id: record._id }, { $set: { lastUsedAt } }).catch((error: unknown) => {
      this.#logger.warn({ err: error, apiKeyId: record._id }, 'Could not record the use of an API key');
    });
  }
}
