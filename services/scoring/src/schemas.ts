import { propertiesNamed, type SchemaType } from '@lead-capture/contracts';
import { MAX_POINTS, MIN_POINTS, WEIGHT_KEYS } from './model.js';

export { errorResponses } from '@lead-capture/kit';

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
      properties: propertiesNamed(WEIGHT_KEYS, points),
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

/** The scoring model: what the settings store, the scorer applies, and GET / PUT exchange. */
export type ScoringModel = SchemaType<typeof SCORING_MODEL>;
