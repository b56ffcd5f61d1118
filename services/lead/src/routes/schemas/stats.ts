import { LEAD_STATUSES, propertiesNamed, QUALIFICATIONS, type SchemaType } from '@lead-capture/contracts';
import { closedObject } from '@lead-capture/kit';
import { sourceRefProperties } from './fragments.js';

/** GET /api/leads/stats. */

/** The most sources GET /api/leads/stats ranks. */
export const STATS_TOP_SOURCES = 10;
/** The longest per-day series GET /api/leads/stats answers, and the default one. */
export const STATS_MAX_DAYS = 365;
export const STATS_DEFAULT_DAYS = 30;

export const STATS_QUERY_SCHEMA = closedObject(
  {
    days: {
      type: 'integer',
      minimum: 1,
      maximum: STATS_MAX_DAYS,
      default: STATS_DEFAULT_DAYS,
      description: `Extension of the contract: how many UTC days perDay covers, today included (1 to ${STATS_MAX_DAYS}). Ignored when from is given`,
    },
    from: {
      type: 'string',
      pattern: '^\\d{4}-\\d{2}-\\d{2}$',
      description:
        'Extension of the contract: the first UTC day (YYYY-MM-DD) of a date range. With from and/or to, every figure counts only the leads created in the range (createdAt), and perDay covers its days. to defaults to today, from to `days` days before to',
    },
    to: {
      type: 'string',
      pattern: '^\\d{4}-\\d{2}-\\d{2}$',
      description: `Extension of the contract: the last UTC day (YYYY-MM-DD, included) of the range; at most ${STATS_MAX_DAYS} days from from`,
    },
  },
  [],
);
export type StatsQuery = SchemaType<typeof STATS_QUERY_SCHEMA>;

const countsOf = <const Keys extends readonly string[]>(keys: Keys) =>
  closedObject(propertiesNamed(keys, { type: 'integer' } as const));

export const STATS_RESPONSE_SCHEMA = closedObject(
  {
    range: {
      ...closedObject({ from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } }),
      description:
        'Extension of the contract, only when from or to was given: the UTC days (both included) the figures count',
    },
    total: { type: 'integer' },
    byStatus: countsOf(LEAD_STATUSES),
    byQualification: {
      ...countsOf(QUALIFICATIONS),
      description:
        'Extension of the contract: leads per qualification, zeros included (leads not scored yet have none, so these may add up to less than total)',
    },
    bySource: {
      type: 'array',
      maxItems: STATS_TOP_SOURCES,
      description: `Extension of the contract: the ${STATS_TOP_SOURCES} sources with the most leads, the most first (ties by name); sources without leads left out. A deleted source keeps its leads and shows deleted: true`,
      items: closedObject({
        ...sourceRefProperties,
        count: { type: 'integer' },
        converted: {
          type: 'integer',
          description:
            'How many of these leads are converted now (status converted): the conversion is converted / count',
        },
      }),
    },
    perDay: {
      type: 'array',
      description:
        'Extension of the contract: leads created on each UTC day of the last `days` days, or of the range (createdAt), oldest first, zeros included',
      items: closedObject({
        date: { type: 'string', format: 'date', description: 'The UTC day, YYYY-MM-DD' },
        count: { type: 'integer' },
      }),
    },
  },
  ['total', 'byStatus', 'byQualification', 'bySource', 'perDay'],
);
