import { nonEmptyText, USER_ROLES, uuid } from './common.js';
import type { SchemaType } from './schema-type.js';

/** The user as it stands after the change (published on create and on every update). */
const userSnapshotSchema = {
  type: 'object',
  required: ['userId', 'email', 'name', 'role', 'active'],
  properties: {
    userId: uuid,
    email: { type: 'string', format: 'email' },
    name: nonEmptyText,
    role: { enum: USER_ROLES },
    active: { type: 'boolean' },
  },
} as const;

export const USER_EVENT_SCHEMAS = {
  'user.created': userSnapshotSchema,
  'user.updated': userSnapshotSchema,
  'user.deleted': {
    type: 'object',
    required: ['userId'],
    properties: { userId: uuid },
  },
} as const;

type UserEventData<T extends keyof typeof USER_EVENT_SCHEMAS> = SchemaType<(typeof USER_EVENT_SCHEMAS)[T]>;

export type UserCreated = UserEventData<'user.created'>;
export type UserUpdated = UserEventData<'user.updated'>;
export type UserDeleted = UserEventData<'user.deleted'>;

export type UserSnapshot = SchemaType<typeof userSnapshotSchema>;
