import type { SchemaType } from '@lead-capture/contracts';
import { closedObject, ID_PARAMS_SCHEMA } from '@lead-capture/kit';
import { MAX_STAGES } from './stages.js';

export { errorResponses } from '@lead-capture/kit';

export const TAGS = ['Pipelines'];

/** Malformed ids are not refused by the schema: any id that names no pipeline is 404 "Pipeline not found". */
export const PIPELINE_PARAMS = ID_PARAMS_SCHEMA;

/** Checked further in code: trimmed names, colours, unique orders, one win and one lost stage. */
const stageIn = closedObject(
  {
    id: { type: 'string', description: 'Only in PUT, to keep an existing stage of this pipeline' },
    name: { type: 'string', description: '1-100 characters after trimming' },
    color: { type: 'string', description: 'Hex color: #rgb or #rrggbb (stored in lower case)' },
    order: {
      type: 'integer',
      minimum: 0,
      // Far past any real pipeline, and well inside the integers a double holds exactly (1e300 is an
      // "integer" too, and two such orders could not be told apart).
      maximum: 100_000,
      description: '0-based display order, unique within the pipeline (at most 100000)',
    },
    isWin: { type: 'boolean', default: false },
    isLost: { type: 'boolean', default: false },
  },
  ['name', 'color', 'order'],
);

/** A stage as a client sends it, after the schema's checks and defaults. */
export type StageInput = SchemaType<typeof stageIn>;

const stagesIn = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_STAGES,
  items: stageIn,
  description:
    'The full list: entries with an id keep that stage, entries without are new, stages left out are removed',
} as const;

const pipelineFields = {
  name: { type: 'string', description: '1-255 characters after trimming' },
  isDefault: {
    type: 'boolean',
    description:
      'true makes this the default pipeline (the previous default is unmarked); false is refused on the default',
  },
  stages: stagesIn,
} as const;

export const CREATE_PIPELINE_BODY = closedObject(pipelineFields, ['name', 'stages']);

export const UPDATE_PIPELINE_BODY = closedObject(pipelineFields, []);

export type PipelineParams = SchemaType<typeof PIPELINE_PARAMS>;
export type CreatePipelineBody = SchemaType<typeof CREATE_PIPELINE_BODY>;
export type UpdatePipelineBody = SchemaType<typeof UPDATE_PIPELINE_BODY>;

const stageOut = closedObject({
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  color: { type: 'string' },
  order: { type: 'integer' },
  isWin: { type: 'boolean' },
  isLost: { type: 'boolean' },
});

export const PIPELINE = closedObject({
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  isDefault: { type: 'boolean' },
  createdAt: { type: 'string', format: 'date-time' },
  stages: { type: 'array', items: stageOut, description: 'Sorted by order' },
});
