import { type SchemaType, USER_ROLES } from '@lead-capture/contracts';
import { pathParamsSchema } from '@lead-capture/kit';

export { errorResponses } from '@lead-capture/kit';

export const NO_CONTENT = { type: 'null', description: 'No content' } as const;

export const ID_PARAMS = pathParamsSchema(['id'], { type: 'string', minLength: 1, maxLength: 64 });
export type IdParams = SchemaType<typeof ID_PARAMS>;

export const EMAIL = { type: 'string', format: 'email', maxLength: 254 } as const;
export const PASSWORD = { type: 'string', minLength: 8, maxLength: 256 } as const;
export const USER_NAME = { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' } as const;
export const ROLE = { type: 'string', enum: USER_ROLES } as const;

export const USER = {
  type: 'object',
  required: ['id', 'email', 'name', 'role', 'active', 'createdAt'],
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    role: ROLE,
    active: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;
