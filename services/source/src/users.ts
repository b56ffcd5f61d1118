import type { Subscription } from '@lead-capture/bus';
import type { EventEnvelope, EventOf, GroupEvent } from '@lead-capture/contracts';
import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';
import { type GroupHandlers, type ServiceDeps, subscribeGroup } from '@lead-capture/kit';

export const USERS_COLLECTION = 'source_users';
export const USER_SYNC_GROUP = 'source.user.sync';

/** What the source service knows of a user: enough to show who created a source. */
type UserDocument = {
  _id: string;
  name: string | null;
  email: string | null;
  deleted: boolean;
  /** occurredAt of the event this state came from; an older event never overwrites it. */
  asOf: string;
};

/** The creator of a source as the API shows it; name and email are null when the user is unknown or deleted. */
export interface Creator {
  id: string;
  name: string | null;
  email: string | null;
}

/** The `user.*` read model (`source_users`), fed by the gateway's user events. */
export class UserDirectory {
  private readonly users: Collection<UserDocument>;

  constructor(private readonly deps: Pick<ServiceDeps, 'store' | 'bus'>) {
    this.users = deps.store.collection<UserDocument>(USERS_COLLECTION);
  }

  /** Idempotent and order-tolerant: the newest event (by occurredAt) wins; a deleted user stays deleted. */
  readonly handlers: GroupHandlers<typeof USER_SYNC_GROUP> = {
    'user.created': (event) => this.save(event),
    'user.updated': (event) => this.save(event),
    'user.deleted': (event) =>
      this.write(event, event.data.userId, { name: null, email: null, deleted: true }),
  };

  subscribe(): Promise<Subscription> {
    return subscribeGroup(this.deps.bus, USER_SYNC_GROUP, this.handlers);
  }

  /** Applies one user event as its delivery would. */
  apply(event: GroupEvent<typeof USER_SYNC_GROUP>): Promise<void> {
    const handle = this.handlers[event.type] as (event: GroupEvent<typeof USER_SYNC_GROUP>) => Promise<void>;
    return handle(event);
  }

  private save(event: EventOf<'user.created'> | EventOf<'user.updated'>): Promise<void> {
    const { userId, name, email } = event.data;
    return this.write(event, userId, { name, email, deleted: false });
  }

  private async write(
    event: EventEnvelope,
    userId: string,
    state: Pick<UserDocument, 'name' | 'email' | 'deleted'>,
  ): Promise<void> {
    try {
      await this.users.updateOne(
        // A deletion is final: a late user.updated must not bring the name back.
        { _id: userId, asOf: { $lte: event.occurredAt }, deleted: { $ne: true } },
        { $set: { ...state, asOf: event.occurredAt } },
        { upsert: true },
      );
    } catch (error) {
      // The upsert collided with the stored user: what we hold is newer, or deleted. Nothing to do.
      if (!isDuplicateKeyError(error)) throw error;
    }
  }

  /** The creators of the given user ids, by id. */
  async creators(userIds: readonly string[]): Promise<Map<string, Creator>> {
    const unique = [...new Set(userIds)];
    const found = await this.users.find({ _id: { $in: unique } });
    const byId = new Map(found.map((user) => [user._id, user]));
    return new Map(
      unique.map((id) => {
        const user = byId.get(id);
        return [id, { id, name: user?.name ?? null, email: user?.email ?? null }];
      }),
    );
  }
}
