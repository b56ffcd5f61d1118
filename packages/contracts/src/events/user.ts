import { nonEmptyText, USER_ROLES, uuid } from './common.js';
import { objectSchema, type SchemaType } from './schema-type.js';

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
  'user.deleted': objectSchema(['userId'], { userId: uuid }),
} as const;

export type UserCreated = SchemaType<(typeof USER_EVENT_SCHEMAS)['user.created']>;
export type UserUpdated = SchemaType<(typeof USER_EVENT_SCHEMAS)['user.updated']>;
export type UserDeleted = SchemaType<(typeof USER_EVENT_SCHEMAS)['user.deleted']>;

export type UserSnapshot = SchemaType<typeof userSnapshotSchema>;
