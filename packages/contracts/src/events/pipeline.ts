import { nonEmptyText, revision, text, uuid } from './common.js';

export interface PipelineStageSnapshot {
  id: string;
  name: string;
  /** Hex colour code. */
  color: string;
  /** 0-based display order. */
  order: number;
  isWin: boolean;
  isLost: boolean;
}

/** The whole pipeline as it stands after the change (published on create and on every update). */
export interface PipelineSnapshot {
  pipelineId: string;
  /** Increases with every change of the pipeline; read models ignore an event older than what they hold. */
  revision?: number;
  name: string;
  isDefault: boolean;
  stages: PipelineStageSnapshot[];
}

export type PipelineCreated = PipelineSnapshot;
export type PipelineUpdated = PipelineSnapshot;

export interface PipelineDeleted {
  pipelineId: string;
  /** Increases with every change of the pipeline; read models ignore an event older than what they hold. */
  revision?: number;
}

const pipelineSnapshotSchema = {
  type: 'object',
  required: ['pipelineId', 'name', 'isDefault', 'stages'],
  properties: {
    pipelineId: uuid,
    revision,
    name: nonEmptyText,
    isDefault: { type: 'boolean' },
    stages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name', 'color', 'order', 'isWin', 'isLost'],
        properties: {
          id: uuid,
          name: nonEmptyText,
          color: text,
          order: { type: 'integer', minimum: 0 },
          isWin: { type: 'boolean' },
          isLost: { type: 'boolean' },
        },
      },
    },
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
