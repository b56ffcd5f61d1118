import { randomUUID } from 'node:crypto';
import { type UserRole, type UserSnapshot, validateEvent } from '@lead-capture/contracts';
import { type DocStore, type Document, isDuplicateKeyError } from '@lead-capture/docstore';
import { badRequest, conflict, notFound, type Outbox } from '@lead-capture/kit';
import { hashPassword } from './passwords.js';
import type { RefreshTokens } from './refresh-tokens.js';

export const USERS_COLLECTION = 'gateway_users';
/** The gateway's outbox collection (kit's Outbox): user events of stored changes not yet published. */
export const GATEWAY_OUTBOX = 'gateway_outbox';

export interface UserDoc extends Document {
  /** Lower-cased; unique. */
  email: string;
  name: string;
  role: UserRole;
  active: boolean;
  passwordHash: string;
  /**
   * Bumped when the password, the role or the status changes: access tokens carry the version they
   * were issued at and an older one is refused. Absent until the first such change: 0.
   */
  tokenVersion?: number;
  createdAt: string;
  updatedAt: string;
}

/** A user as the API shows it: never the hash. */
export interface PublicUser {
  id: string;
  email: string;
  name: string;
  role: UserRole;
  active: boolean;
  createdAt: string;
}

export interface NewUser {
  email: string;
  name: string;
  password: string;
  role: UserRole;
}

export interface UserChanges {
  name?: string;
  role?: UserRole;
  active?: boolean;
  password?: string;
}

export function toPublicUser(user: UserDoc): PublicUser {
  const { _id, email, name, role, active, createdAt } = user;
  return { id: _id, email, name, role, active, createdAt };
}

function snapshotOf(user: UserDoc): UserSnapshot {
  const { _id, email, name, role, active } = user;
  return { userId: _id, email, name, role, active };
}

/** The version every access token of this user must carry (absent: 0). */
export function tokenVersionOf(user: Pick<UserDoc, 'tokenVersion'>): number {
  return user.tokenVersion ?? 0;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The gateway's users (collection gateway_users). Every change is stored with its user.created /
 * user.updated / user.deleted in one outbox change (gateway_outbox), then published, so the lead
 * service knows who leads can be assigned to; a publish the bus refuses is relayed later. Disabling or
 * deleting a user, or changing their password, revokes their refresh tokens; changing their password,
 * role or status bumps their token version, which revokes their access tokens.
 */
export class UserDirectory {
  readonly #users;
  readonly #outbox: Outbox;
  readonly #refreshTokens: RefreshTokens;
  readonly #now: () => number;

  constructor(options: {
    store: DocStore;
    outbox: Outbox;
    refreshTokens: RefreshTokens;
    now?: () => number;
  }) {
    this.#users = options.store.collection<UserDoc>(USERS_COLLECTION);
    this.#outbox = options.outbox;
    this.#refreshTokens = options.refreshTokens;
    this.#now = options.now ?? Date.now;
  }

  async ensureIndexes(): Promise<void> {
    await this.#users.createIndex({ email: 1 }, { unique: true });
  }

  findById(id: string): Promise<UserDoc | null> {
    return this.#users.findOne({ _id: id });
  }

  findByEmail(email: string): Promise<UserDoc | null> {
    return this.#users.findOne({ email: normalizeEmail(email) });
  }

  list(): Promise<UserDoc[]> {
    return this.#users.find({}, { sort: { createdAt: 1, email: 1 } });
  }

  async isEmpty(): Promise<boolean> {
    return (await this.#users.countDocuments({})) === 0;
  }

  /** Inserts and announces the user; 409 when the e-mail is taken. */
  async create(user: NewUser): Promise<UserDoc> {
    const timestamp = new Date(this.#now()).toISOString();
    const doc: UserDoc = {
      _id: randomUUID(),
      email: normalizeEmail(user.email),
      name: user.name.trim(),
      role: user.role,
      active: true,
      passwordHash: await hashPassword(user.password),
      createdAt: timestamp,
      updatedAt: timestamp,
    };
    const problem = validateEvent('user.created', snapshotOf(doc));
    if (problem) throw badRequest(problem.replace(/^Invalid user\.created: /, ''));
    try {
      await this.#outbox.change(async (change) => {
        await change.collection<UserDoc>(USERS_COLLECTION).insertOne(doc);
        await change.emit(doc._id, 'user.created', snapshotOf(doc));
      });
    } catch (error) {
      if (isDuplicateKeyError(error)) throw conflict('A user with this email already exists');
      throw error;
    }
    return doc;
  }

  /** 404 for an unknown id; 409 when the change would leave no active admin. */
  async update(id: string, changes: UserChanges): Promise<UserDoc> {
    const user = await this.#existing(id);
    const staysActiveAdmin = (changes.role ?? user.role) === 'admin' && (changes.active ?? user.active);
    if (user.role === 'admin' && user.active && !staysActiveAdmin) await this.#assertAnotherActiveAdmin(id);

    const set: Partial<UserDoc> = { updatedAt: new Date(this.#now()).toISOString() };
    if (changes.name !== undefined) set.name = changes.name.trim();
    if (changes.role !== undefined) set.role = changes.role;
    if (changes.active !== undefined) set.active = changes.active;
    if (changes.password !== undefined) set.passwordHash = await hashPassword(changes.password);
    const revokesAccessTokens =
      changes.password !== undefined ||
      (changes.active !== undefined && changes.active !== user.active) ||
      (changes.role !== undefined && changes.role !== user.role);
    const updated = await this.#outbox.change(async (change) => {
      const changed = await change
        .collection<UserDoc>(USERS_COLLECTION)
        .findOneAndUpdate(
          { _id: id },
          revokesAccessTokens ? { $set: set, $inc: { tokenVersion: 1 } } : { $set: set },
        );
      if (!changed) throw notFound('User not found');
      await change.emit(id, 'user.updated', snapshotOf(changed));
      return changed;
    });
    if (changes.active === false || changes.password !== undefined) await this.#refreshTokens.revokeAllOf(id);
    return updated;
  }

  /** 404 for an unknown id; 409 for the last active admin. */
  async remove(id: string): Promise<void> {
    const user = await this.#existing(id);
    if (user.role === 'admin' && user.active) await this.#assertAnotherActiveAdmin(id);
    await this.#outbox.change(async (change) => {
      const { deletedCount } = await change.collection(USERS_COLLECTION).deleteOne({ _id: id });
      if (deletedCount === 0) throw notFound('User not found');
      await change.emit(id, 'user.deleted', { userId: id });
    });
    await this.#refreshTokens.revokeAllOf(id);
  }

  async #existing(id: string): Promise<UserDoc> {
    const user = await this.findById(id);
    if (!user) throw notFound('User not found');
    return user;
  }

  async #assertAnotherActiveAdmin(id: string): Promise<void> {
    const others = await this.#users.countDocuments({ role: 'admin', active: true, _id: { $ne: id } });
    if (others === 0) throw conflict('The last active admin cannot be demoted, disabled or deleted');
  }
}
