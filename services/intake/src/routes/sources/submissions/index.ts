import type { SchemaType } from '@lead-capture/contracts';
import {
  errorResponses,
  LIMIT_QUERY_SCHEMA,
  notAudited,
  PAGE_QUERY_SCHEMA,
  pagedListSchema,
  requireScope,
} from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { SUBMISSION_OUTCOMES } from '../../../collections.js';
import type { SubmissionIntake } from '../../../submissions/intake.js';

const submissionSchema = {
  type: 'object',
  required: ['id', 'receivedAt', 'outcome', 'contentType', 'ip', 'userAgent', 'payload'],
  properties: {
    id: { type: 'string' },
    receivedAt: { type: 'string', format: 'date-time' },
    outcome: { type: 'string', enum: SUBMISSION_OUTCOMES },
    error: { type: 'string', description: 'Why it was rejected, or why its latest replay failed' },
    leadId: { type: 'string', description: 'The lead it created (or that was flagged as a duplicate)' },
    duplicateOf: { type: 'string', description: 'The submission a repeated delivery repeated' },
    contentType: { type: ['string', 'null'] },
    ip: { type: 'string' },
    userAgent: { type: ['string', 'null'] },
    payload: {
      description:
        'The payload as received (null when it could not be read, or when only an excerpt was kept)',
    },
    payloadTruncated: {
      type: 'boolean',
      description:
        'A payload larger than 64 KiB (2 KiB for a rejected or repeated delivery): only its start is kept, in ' +
        'payloadExcerpt, and it cannot be replayed. The lead of an accepted one got every mapped field.',
    },
    payloadBytes: {
      type: ['integer', 'null'],
      description: "Size of the payload's JSON text in bytes (null when unknown)",
    },
    payloadExcerpt: {
      type: 'string',
      description: "The start of a truncated payload's JSON text (not valid JSON by itself)",
    },
    leadgen: {
      type: 'object',
      description:
        'A lead named by a Meta leadgen notification (source format facebook-lead-ads), fetched from the Graph API: ' +
        'outcome fetching while it is retried with backoff, fetch_failed once given up (LEADGEN_GIVE_UP_HOURS; replay fetches again)',
      required: ['leadgenId', 'attempts', 'giveUpAt'],
      properties: {
        leadgenId: { type: 'string' },
        attempts: { type: 'integer', description: 'Graph API fetches made so far' },
        lastError: { type: 'string', description: 'Why the latest fetch failed' },
        lastAttemptAt: { type: 'string', format: 'date-time' },
        nextAttemptAt: { type: 'string', format: 'date-time', description: 'When the next fetch is due' },
        giveUpAt: { type: 'string', format: 'date-time', description: 'No fetch is retried after this' },
      },
    },
  },
} as const;

const LIST_PARAMS = {
  type: 'object',
  required: ['sourceId'],
  properties: { sourceId: { type: 'string' } },
} as const;

const LIST_QUERY = {
  type: 'object',
  properties: {
    page: PAGE_QUERY_SCHEMA,
    limit: LIMIT_QUERY_SCHEMA,
    outcome: { type: 'string', enum: SUBMISSION_OUTCOMES },
  },
} as const;

const REPLAY_PARAMS = {
  type: 'object',
  required: ['sourceId', 'submissionId'],
  properties: { sourceId: { type: 'string' }, submissionId: { type: 'string' } },
} as const;

const listSchema = {
  summary: "A source's webhook submissions, newest first",
  description:
    'Every delivery to the source webhook within the retention period, accepted or rejected, with what ' +
    'became of it: accepted (waiting for the lead service), lead_created, duplicate_lead, rejected (with ' +
    'the reason), duplicate_delivery (a retried delivery; no second lead), fetching / fetch_failed (a Meta ' +
    'leadgen lead being fetched from the Graph API, or given up; see leadgen).',
  tags: ['sources'],
  params: LIST_PARAMS,
  querystring: LIST_QUERY,
  response: { 200: pagedListSchema(submissionSchema), ...errorResponses(401, 404) },
} as const;

const replaySchema = {
  summary: "Replay a submission through the source's current field mappings",
  description:
    'Publishes the stored payload again as the same submission: the lead it created is updated, or a ' +
    'lead is created if it made none. 400 when the payload still fails mapping (recorded on the submission).',
  tags: ['sources'],
  params: REPLAY_PARAMS,
  response: {
    202: {
      type: 'object',
      required: ['submissionId', 'outcome'],
      additionalProperties: false,
      properties: {
        submissionId: { type: 'string' },
        outcome: { type: 'string', enum: SUBMISSION_OUTCOMES },
      },
    },
    ...errorResponses(400, 401, 403, 404, 409, 503),
  },
} as const;

/** GET /api/sources/<sourceId>/submissions and POST .../submissions/<submissionId>/replay. */
export async function submissionRoutes(
  app: FastifyInstance,
  options: { intake: SubmissionIntake },
): Promise<void> {
  const { intake } = options;

  app.get<{ Params: SchemaType<typeof LIST_PARAMS>; Querystring: SchemaType<typeof LIST_QUERY> }>(
    '/api/sources/:sourceId/submissions',
    { schema: listSchema, onRequest: requireScope('read') },
    async (request) => intake.list(request.params.sourceId, request.query),
  );

  app.post<{ Params: SchemaType<typeof REPLAY_PARAMS> }>(
    '/api/sources/:sourceId/submissions/:submissionId/replay',
    {
      config: {
        audit: notAudited('Runs a stored submission again; the submissions log records its outcome'),
      },
      schema: replaySchema,
      onRequest: requireScope('full'),
    },
    async (request, reply) => {
      const { sourceId, submissionId } = request.params;
      return reply.code(202).send(await intake.replay(sourceId, submissionId));
    },
  );
}
