import {
  dateTime,
  fieldMappingsSchema,
  type LeadField,
  nonEmptyText,
  revision,
  text,
  uuid,
} from './common.js';

/** Incoming field name -> the standard lead field it fills. */
export type FieldMappings = Record<string, LeadField>;

export interface UserRef {
  id: string;
  name: string;
  email: string;
}

export interface SourceCreated {
  sourceId: string;
  /** Increases with every change of the source; read models ignore an event older than what they hold. */
  revision?: number;
  name: string;
  /** The credential in the webhook URL; the intake keeps a token -> source read model. */
  webhookToken: string;
  fieldMappings: FieldMappings;
  createdAt: string;
  createdBy: UserRef;
}

export interface SourceUpdated {
  sourceId: string;
  /** Increases with every change of the source; read models ignore an event older than what they hold. */
  revision?: number;
  name: string;
  fieldMappings: FieldMappings;
}

export interface SourceTokenRotated {
  sourceId: string;
  /** Increases with every change of the source; read models ignore an event older than what they hold. */
  revision?: number;
  /** The new token; the previous one stops working as soon as this is consumed. */
  webhookToken: string;
}

export interface SourceDeleted {
  sourceId: string;
  /** Increases with every change of the source; read models ignore an event older than what they hold. */
  revision?: number;
}

const sourceName = { type: 'string', minLength: 1, maxLength: 255 } as const;

export const SOURCE_EVENT_SCHEMAS = {
  'source.created': {
    type: 'object',
    required: ['sourceId', 'name', 'webhookToken', 'fieldMappings', 'createdAt', 'createdBy'],
    properties: {
      sourceId: uuid,
      revision,
      name: sourceName,
      webhookToken: nonEmptyText,
      fieldMappings: fieldMappingsSchema,
      createdAt: dateTime,
      createdBy: {
        type: 'object',
        required: ['id', 'name', 'email'],
        properties: { id: uuid, name: text, email: text },
      },
    },
  },
  'source.updated': {
    type: 'object',
    required: ['sourceId', 'name', 'fieldMappings'],
    properties: { sourceId: uuid, revision, name: sourceName, fieldMappings: fieldMappingsSchema },
  },
  'source.token_rotated': {
    type: 'object',
    required: ['sourceId', 'webhookToken'],
    properties: { sourceId: uuid, revision, webhookToken: nonEmptyText },
  },
  'source.deleted': {
    type: 'object',
    required: ['sourceId'],
    properties: { sourceId: uuid, revision },
  },
} as const;
