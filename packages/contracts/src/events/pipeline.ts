import { nonEmptyText, revision, text, uuid } from './common.js';
import { objectSchema, type SchemaType } from './schema-type.js';

const stageSnapshotSchema = {
  type: 'object',
  required: ['id', 'name', 'color', 'order', 'isWin', 'isLost'],
  properties: {
    id: uuid,
    name: nonEmptyText,
    /** Hex colour code. */
    color: text,
    /** 0-based display order. */
    order: { type: 'integer', minimum: 0 },
    isWin: { type: 'boolean' },
    isLost: { type: 'boolean' },
  },
} as const;

/** The whole pipeline as it stands after the change (published on create and on every update). */
const pipelineSnapshotSchema = {
  type: 'object',
  required: ['pipelineId', 'name', 'isDefault', 'stages'],
  properties: {
    pipelineId: uuid,
    /** Increases with every change of the pipeline; read models ignore an event older than what they hold. */
    revision,
    name: nonEmptyText,
    isDefault: { type: 'boolean' },
    stages: { type: 'array', items: stageSnapshotSchema },
  },
} as const;

export const PIPELINE_EVENT_SCHEMAS = {
  'pipeline.created': pipelineSnapshotSchema,
  'pipeline.updated': pipelineSnapshotSchema,
  'pipeline.deleted': objectSchema(['pipelineId'], { pipelineId: uuid, revision }),
} as const;

export type PipelineCreated = SchemaType<(typeof PIPELINE_EVENT_SCHEMAS)['pipeline.created']>;
export type PipelineUpdated = SchemaType<(typeof PIPELINE_EVENT_SCHEMAS)['pipeline.updated']>;
export type PipelineDeleted = SchemaType<(typeof PIPELINE_EVENT_SCHEMAS)['pipeline.deleted']>;

export type PipelineSnapshot = SchemaType<typeof pipelineSnapshotSchema>;
export type PipelineStageSnapshot = SchemaType<typeof stageSnapshotSchema>;
