import { nonEmptyText, USER_ROLES, type UserRole, uuid } from './common.js';

/** The user as it stands after the change (published on create and on every update). */
export interface UserSnapshot {
  userId: string;
  email: string;
  name: string;
  role: UserRole;
  active: boolean;
}

export type UserCreated = UserSnapshot;
export type UserUpdated = UserSnapshot;

export interface UserDeleted {
  userId: string;
}

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
