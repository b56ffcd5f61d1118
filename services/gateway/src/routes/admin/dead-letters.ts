import type { DeadLetter, MessageBus } from '@lead-capture/bus';
import { CONSUMER_GROUPS, type SchemaType } from '@lead-capture/contracts';
import { notAudited, notFound, pathParamsSchema, requireRole, requireScope } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../schemas.js';

/** How many letters a summary counts per group; a larger backlog shows as this number. */
const SUMMARY_LIMIT = 1000;

const GROUP_PARAMS = pathParamsSchema(['group'], { type: 'string', minLength: 1, maxLength: 200 });

type GroupParams = SchemaType<typeof GROUP_PARAMS>;

const DEAD_LETTER_LIST_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: SUMMARY_LIMIT, default: 100 } },
} as const;

const REPLAY_BODY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ids: {
      type: 'array',
      minItems: 1,
      maxItems: SUMMARY_LIMIT,
      items: { type: 'string', minLength: 1 },
    },
  },
} as const;

const DEAD_LETTER = {
  type: 'object',
  required: ['id', 'type', 'reason', 'attempts', 'deadAt'],
  properties: {
    id: { type: 'string', description: 'The event id (empty when the message was not a readable event)' },
    type: { type: 'string' },
    correlationId: { type: 'string' },
    reason: { type: 'string', description: 'The last handler error, or why the payload was refused' },
    attempts: { type: 'integer' },
    deadAt: { type: 'string' },
    data: { description: 'The event payload (null when unreadable)' },
    raw: { type: 'string', description: 'The message body, when it was not a readable event' },
  },
} as const;

function assertKnownGroup(group: string): void {
  if (!CONSUMER_GROUPS.some((known) => known.group === group)) {
    throw notFound(`Unknown consumer group: ${group}`);
  }
}

/** Field names whose values are credentials: webhook tokens, signing secrets, API tokens, passwords. */
const SECRET_FIELD = /token|secret|password|api_?key/i;
const REDACTED = '[REDACTED]';

/**
 * The value with every credential-named field's value replaced: some events carry credentials to
 * their consumers (a source's webhook token and signing secret to the intake), which the API never
 * shows again. A replay sends the stored message, untouched.
 */
function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [
      key,
      SECRET_FIELD.test(key) && field !== null ? REDACTED : withoutSecrets(field),
    ]),
  );
}

/** An unreadable message's text, its credentials redacted when it is JSON at all. */
function rawWithoutSecrets(raw: string): string {
  try {
    return JSON.stringify(withoutSecrets(JSON.parse(raw)));
  } catch {
    return raw;
  }
}

function toView(letter: DeadLetter) {
  return {
    id: letter.id,
    type: letter.event.type,
    correlationId: letter.event.correlationId,
    reason: letter.reason,
    attempts: letter.attempts,
    deadAt: letter.deadAt,
    data: withoutSecrets(letter.event.data),
    ...(letter.raw === undefined ? {} : { raw: rawWithoutSecrets(letter.raw) }),
  };
}

/**
 * /api/admin/dead-letters: the messages a consumer gave up on after its last retry (or refused as
 * unreadable), per consumer group, for an operator to read and send back once the cause is fixed.
 * Admins only, with full scope to replay.
 */
export async function deadLetterRoutes(app: FastifyInstance, options: { bus: MessageBus }) {
  const { bus } = options;
  app.addHook('onRequest', requireRole('admin'));

  app.get(
    '/api/admin/dead-letters',
    {
      schema: {
        tags: ['admin'],
        summary: 'Dead letters per consumer group (counted up to 1000 each)',
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: {
              data: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['group', 'count'],
                  properties: { group: { type: 'string' }, count: { type: 'integer' } },
                },
              },
            },
          },
          ...errorResponses(401, 403),
        },
      },
    },
    async () => {
      const data = [];
      for (const { group } of CONSUMER_GROUPS) {
        data.push({ group, count: (await bus.listDeadLetters(group, SUMMARY_LIMIT)).length });
      }
      return { data };
    },
  );

  app.get<{ Params: GroupParams; Querystring: SchemaType<typeof DEAD_LETTER_LIST_QUERY> }>(
    '/api/admin/dead-letters/:group',
    {
      schema: {
        tags: ['admin'],
        summary: "A consumer group's dead letters, oldest first",
        params: GROUP_PARAMS,
        querystring: DEAD_LETTER_LIST_QUERY,
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: { data: { type: 'array', items: DEAD_LETTER } },
          },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      assertKnownGroup(request.params.group);
      const letters = await bus.listDeadLetters(request.params.group, request.query.limit);
      return { data: letters.map(toView) };
    },
  );

  // No body at all replays every letter of the group.
  app.post<{ Params: GroupParams; Body: SchemaType<typeof REPLAY_BODY> | undefined }>(
    '/api/admin/dead-letters/:group/replay',
    {
      config: {
        audit: notAudited('Hands failed events back to their consumers; it changes no setting and no access'),
      },
      onRequest: requireScope('full'),
      schema: {
        tags: ['admin'],
        summary: "Send a group's dead letters (all, or those ids) back to its queue",
        params: GROUP_PARAMS,
        body: REPLAY_BODY,
        response: {
          200: { type: 'object', required: ['replayed'], properties: { replayed: { type: 'integer' } } },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      assertKnownGroup(request.params.group);
      const replayed = await bus.replayDeadLetters(request.params.group, request.body?.ids);
      return { replayed };
    },
  );
}
