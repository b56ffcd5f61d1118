import { nonEmptyText, revision, text, uuid } from './common.js';
import type { SchemaType } from './schema-type.js';

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
  'pipeline.deleted': {
    type: 'object',
    required: ['pipelineId'],
    properties: { pipelineId: uuid, revision },
  },
} as const;

type PipelineEventData<T extends keyof typeof PIPELINE_EVENT_SCHEMAS> = SchemaType<
  (typeof PIPELINE_EVENT_SCHEMAS)[T]
>;

export type PipelineCreated = PipelineEventData<'pipeline.created'>;
export type PipelineUpdated = PipelineEventData<'pipeline.updated'>;
export type PipelineDeleted = PipelineEventData<'pipeline.deleted'>;

export type PipelineSnapshot = SchemaType<typeof pipelineSnapshotSchema>;
export type PipelineStageSnapshot = SchemaType<typeof stageSnapshotSchema>;
