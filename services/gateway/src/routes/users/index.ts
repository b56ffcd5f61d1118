import type { SchemaType } from '@lead-capture/contracts';
import {
  auditCreate,
  auditRecord,
  badRequest,
  pickFields,
  requireRole,
  requireSession,
} from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import type { HashingQueue } from '../../identity/hashing-queue.js';
import type { PasswordAttempts } from '../../identity/password-attempts.js';
import { verifyPassword as defaultVerifyPassword } from '../../identity/passwords.js';
import { toPublicUser, type UserDirectory } from '../../identity/users.js';
import {
  EMAIL,
  errorResponses,
  ID_PARAMS,
  type IdParams,
  NO_CONTENT,
  PASSWORD,
  ROLE,
  USER,
  USER_NAME,
} from '../schemas.js';

export const USERS_NEED_A_SESSION = 'API keys cannot manage users; sign in as an admin';

/**
 * A signed-in admin only: an API key acts as its creator, so an admin's leaked key would otherwise
 * be an admin login (create an admin, reset a password), as it may not manage keys either.
 */
const signedInAdminOnly = [requireSession(USERS_NEED_A_SESSION), requireRole('admin')];

const CREATE_USER_BODY = {
  type: 'object',
  required: ['email', 'name', 'password'],
  additionalProperties: false,
  properties: {
    email: EMAIL,
    name: USER_NAME,
    password: PASSWORD,
    role: { ...ROLE, default: 'member' },
  },
} as const;

const CHANGE_USER_BODY = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: { name: USER_NAME, role: ROLE, active: { type: 'boolean' }, password: PASSWORD },
} as const;

const CHANGE_OWN_PASSWORD_BODY = {
  type: 'object',
  required: ['currentPassword', 'newPassword'],
  additionalProperties: false,
  properties: { currentPassword: { type: 'string', maxLength: 256 }, newPassword: PASSWORD },
} as const;

/**
 * /api/users: the people leads can be assigned to. Anyone authenticated (API keys too) may list
 * them; only a signed-in admin (an access token, never an API key) creates, changes and deletes them.
 */
export async function userRoutes(
  app: FastifyInstance,
  options: {
    users: UserDirectory;
    /** Told of every change to a user, so what hangs on their access (live streams) is checked at once. */
    onUserChanged?: (userId: string) => Promise<void>;
    /** A wrong current password counts against the sign-in budgets, as a wrong sign-in does. */
    passwordChecks: PasswordAttempts;
    /** The sign-in's hashing queue: a password check here waits for a slot too (503 past its queue). */
    hashing: HashingQueue;
    verifyPassword?: (password: string, hash: string) => Promise<boolean>;
  },
): Promise<void> {
  const { users, onUserChanged, passwordChecks, hashing, verifyPassword = defaultVerifyPassword } = options;

  app.get(
    '/api/users',
    {
      schema: {
        tags: ['users'],
        summary: 'List users',
        response: { 200: { type: 'array', items: USER }, ...errorResponses(401, 429) },
      },
    },
    async () => (await users.list()).map(toPublicUser),
  );

  app.post<{ Body: SchemaType<typeof CREATE_USER_BODY> }>(
    '/api/users',
    {
      config: {
        audit: auditCreate('user.create', { id: 'userId', fields: ['email', 'name', 'role', 'active'] }),
      },
      onRequest: signedInAdminOnly,
      schema: {
        tags: ['users'],
        summary: 'Create a user (signed-in admin)',
        description: 'Needs an access token of an admin; any API key gets 403.',
        body: CREATE_USER_BODY,
        response: { 201: USER, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(toPublicUser(await users.create(request.body))),
  );

  app.patch<{ Params: IdParams; Body: SchemaType<typeof CHANGE_USER_BODY> }>(
    '/api/users/:id',
    {
      config: {
        audit: {
          action: 'user.update',
          change: ({ params, requestBody }) => ({
            userId: params.id,
            ...pickFields(requestBody, ['name', 'role', 'active']),
            ...(requestBody?.password === undefined ? {} : { passwordChanged: true }),
          }),
        },
      },
      onRequest: signedInAdminOnly,
      schema: {
        tags: ['users'],
        summary: 'Change a user (signed-in admin)',
        description:
          'Needs an access token of an admin; any API key gets 403. Disabling a user or changing their password signs them out everywhere. The last active admin cannot be demoted or disabled (409).',
        params: ID_PARAMS,
        body: CHANGE_USER_BODY,
        response: { 200: USER, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      const updated = await users.update(request.params.id, request.body);
      await onUserChanged?.(updated._id);
      return toPublicUser(updated);
    },
  );

  app.put<{ Body: SchemaType<typeof CHANGE_OWN_PASSWORD_BODY> }>(
    '/api/users/me/password',
    {
      config: { audit: { action: 'user.own_password_change', change: () => ({ passwordChanged: true }) } },
      onRequest: requireSession('API keys cannot change a password; sign in instead'),
      schema: {
        tags: ['users'],
        summary: 'Change your own password (any signed-in user)',
        description:
          'Needs an access token (any role) and the current password; any API key gets 403. Signs the user out everywhere, this session included: sign in again with the new password.',
        body: CHANGE_OWN_PASSWORD_BODY,
        response: { 204: NO_CONTENT, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { currentPassword, newPassword } = request.body;
      const user = await users.findById(request.identity!.userId);
      if (!user) throw badRequest('The current password is not right');
      const notAFailure = await passwordChecks.hold(user.email, request.ip);
      let failed = false;
      try {
        failed = !(await hashing.run(() => verifyPassword(currentPassword, user.passwordHash)));
      } finally {
        if (!failed) await notAFailure();
      }
      if (failed) throw badRequest('The current password is not right');
      await users.update(user._id, { password: newPassword });
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: IdParams }>(
    '/api/users/:id',
    {
      config: { audit: auditRecord('user.delete', { id: 'userId' }) },
      onRequest: signedInAdminOnly,
      schema: {
        tags: ['users'],
        summary: 'Delete a user (signed-in admin)',
        description:
          'Needs an access token of an admin; any API key gets 403. The last active admin cannot be deleted (409).',
        params: ID_PARAMS,
        response: { 204: NO_CONTENT, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await users.remove(request.params.id);
      await onUserChanged?.(request.params.id);
      return reply.code(204).send();
    },
  );
}
