import { ERROR_RESPONSE_SCHEMA } from '@lead-capture/kit';
import { MAX_POINTS, MIN_POINTS, WEIGHT_KEYS } from './model.js';

/** The error bodies a route can answer, for its response schema (and the OpenAPI document). */
export function errorResponses(...statuses: number[]): Record<number, typeof ERROR_RESPONSE_SCHEMA> {
  return Object.fromEntries(statuses.map((status) => [status, ERROR_RESPONSE_SCHEMA]));
}

export const TAGS = ['Scoring settings'];

/** Most sources that can carry a weight of their own. */
export const MAX_SOURCE_WEIGHTS = 1000;

const points = { type: 'integer', minimum: MIN_POINTS, maximum: MAX_POINTS } as const;
const threshold = { type: 'integer', minimum: 1, maximum: 100 } as const;

/** The model, as GET answers and PUT takes it (PUT replaces the whole model). */
export const SCORING_MODEL = {
  type: 'object',
  required: ['weights', 'thresholds', 'sourceWeights'],
  additionalProperties: false,
  properties: {
    weights: {
      type: 'object',
      required: WEIGHT_KEYS,
      additionalProperties: false,
      properties: Object.fromEntries(WEIGHT_KEYS.map((key) => [key, points])),
      description: 'Points of each rule, -100..100 (0 switches a rule off)',
    },
    thresholds: {
      type: 'object',
      required: ['hot', 'warm'],
      additionalProperties: false,
      properties: { hot: threshold, warm: threshold },
      description: 'A score >= hot is hot, >= warm is warm, else cold; hot must be greater than warm',
    },
    sourceWeights: {
      type: 'object',
      maxProperties: MAX_SOURCE_WEIGHTS,
      additionalProperties: points,
      description: 'Extra points (-100..100) for the leads of a source, keyed by source id (a UUID)',
    },
  },
} as const;
