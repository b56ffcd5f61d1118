import type { SchemaObject } from 'ajv';
import type { EventEnvelope } from '../envelope.js';
import {
  LEAD_EVENT_SCHEMAS,
  type LeadCaptured,
  type LeadDeleted,
  type LeadEnriched,
  type LeadEnrolled,
  type LeadEnrollmentStopped,
  type LeadImportProgress,
  type LeadMerged,
  type LeadNotified,
  type LeadReceived,
  type LeadScored,
  type LeadSequenceStepSent,
  type LeadUpdated,
} from './lead.js';
import {
  PIPELINE_EVENT_SCHEMAS,
  type PipelineCreated,
  type PipelineDeleted,
  type PipelineUpdated,
} from './pipeline.js';
import {
  SOURCE_EVENT_SCHEMAS,
  type SourceCreated,
  type SourceDeleted,
  type SourceTokenRotated,
  type SourceUpdated,
} from './source.js';
import { USER_EVENT_SCHEMAS, type UserCreated, type UserDeleted, type UserUpdated } from './user.js';

/** Every event type the system publishes, and the TypeScript type of its `data`. */
export interface EventDataMap {
  'lead.received': LeadReceived;
  'lead.captured': LeadCaptured;
  'lead.enriched': LeadEnriched;
  'lead.scored': LeadScored;
  'lead.notified': LeadNotified;
  'lead.enrolled': LeadEnrolled;
  'lead.sequence_step_sent': LeadSequenceStepSent;
  'lead.enrollment_stopped': LeadEnrollmentStopped;
  'lead.updated': LeadUpdated;
  'lead.deleted': LeadDeleted;
  'lead.merged': LeadMerged;
  'lead.import_progress': LeadImportProgress;
  'source.created': SourceCreated;
  'source.updated': SourceUpdated;
  'source.token_rotated': SourceTokenRotated;
  'source.deleted': SourceDeleted;
  'pipeline.created': PipelineCreated;
  'pipeline.updated': PipelineUpdated;
  'pipeline.deleted': PipelineDeleted;
  'user.created': UserCreated;
  'user.updated': UserUpdated;
  'user.deleted': UserDeleted;
}

export type EventType = keyof EventDataMap;

/** The `data` type of an event type; `unknown` for a type the contracts do not know. */
export type EventData<T extends string> = T extends EventType ? EventDataMap[T] : unknown;

/** The envelope of one known event type. */
export type EventOf<T extends EventType> = EventEnvelope<T, EventDataMap[T]>;

/** Any known event; `switch (event.type)` narrows `event.data`. */
export type KnownEvent = { [T in EventType]: EventOf<T> }[EventType];

/** The JSON schema (draft-07) of every event's `data`. */
export const EVENT_SCHEMAS: Readonly<Record<EventType, SchemaObject>> = {
  ...LEAD_EVENT_SCHEMAS,
  ...SOURCE_EVENT_SCHEMAS,
  ...PIPELINE_EVENT_SCHEMAS,
  ...USER_EVENT_SCHEMAS,
};

export const EVENT_TYPES: readonly EventType[] = Object.freeze(Object.keys(EVENT_SCHEMAS) as EventType[]);

export function isKnownEventType(type: string): type is EventType {
  return Object.hasOwn(EVENT_SCHEMAS, type);
}
