import { randomUUID } from 'node:crypto';
import { type MessageBus, UnroutableError } from '@lead-capture/bus';
import { type UserRole, type UserSnapshot, validateEvent } from '@lead-capture/contracts';
import { type DocStore, type Document, isDuplicateKeyError } from '@lead-capture/docstore';
import { badRequest, conflict, type Logger, notFound } from '@lead-capture/kit';
import { hashPassword } from './passwords.js';
import type { RefreshTokens } from './refresh-tokens.js';

export const USERS_COLLECTION = 'gateway_users';

export interface UserDoc extends Document {
  /** Lower-cased; unique. */
  email: string;
  name: string;
  role: UserRole;
  active: boolean;
  passwordHash: string;
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

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The gateway's users (collection gateway_users). Every change is published as user.created /
 * user.updated / user.deleted after it is stored (and undone when the bus refuses it), so the lead
 * service knows who leads can be assigned to. Disabling or deleting a user, or changing their password, revokes their refresh tokens.
 */
export class UserDirectory {
  readonly #users;
  readonly #bus: MessageBus;
  readonly #refreshTokens: RefreshTokens;
  readonly #now: () => number;
  readonly #logger: Logger;

  constructor(options: {
    store: DocStore;
    bus: MessageBus;
    refreshTokens: RefreshTokens;
    logger: Logger;
    now?: () => number;
  }) {
    this.#users = options.store.collection<UserDoc>(USERS_COLLECTION);
    this.#bus = options.bus;
    this.#logger = options.logger;
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
      await this.#users.insertOne(doc);
    } catch (error) {
      if (isDuplicateKeyError(error)) throw conflict('A user with this email already exists');
      throw error;
    }
    await this.#announce('user.created', snapshotOf(doc), () => this.#users.deleteOne({ _id: doc._id }));
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
    const updated = await this.#users.findOneAndUpdate({ _id: id }, { $set: set });
    if (!updated) throw notFound('User not found');
    await this.#announce('user.updated', snapshotOf(updated), () =>
      this.#users.replaceOne({ _id: id }, user),
    );
    if (changes.active === false || changes.password !== undefined) await this.#refreshTokens.revokeAllOf(id);
    return updated;
  }

  /** 404 for an unknown id; 409 for the last active admin. */
  async remove(id: string): Promise<void> {
    const user = await this.#existing(id);
    if (user.role === 'admin' && user.active) await this.#assertAnotherActiveAdmin(id);
    const { deletedCount } = await this.#users.deleteOne({ _id: id });
    if (deletedCount === 0) throw notFound('User not found');
    await this.#announce('user.deleted', { userId: id }, () => this.#users.insertOne(user));
    await this.#refreshTokens.revokeAllOf(id);
  }

  /**
   * Publishes the change; when the bus fails, the stored change is undone before the error goes
   * on, so the other services never miss a user that exists (or keep one that does not). An event
   * no service has ever subscribed to (no queue bound yet) is not an inconsistency: it is logged.
   */
  async #announce<T>(type: string, data: T, undo: () => Promise<unknown>): Promise<void> {
    try {
      await this.#bus.publish(type, data);
    } catch (error) {
      if (error instanceof UnroutableError) {
        this.#logger.warn({ type }, 'No service consumes this user event yet; the change is stored');
        return;
      }
      await undo();
      throw error;
    }
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
