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

/**
 * Every event type the system publishes, and the TypeScript type of its `data`: each one derived
 * from its schema in the domain file (`SchemaType`), named there, and listed here. An interface,
 * not a mapped type, so the compiler resolves `EventDataMap[T]` one entry at a time.
 */
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

const SCHEMAS_BY_TYPE = {
  ...LEAD_EVENT_SCHEMAS,
  ...SOURCE_EVENT_SCHEMAS,
  ...PIPELINE_EVENT_SCHEMAS,
  ...USER_EVENT_SCHEMAS,
} as const;

/** A schema without its EventDataMap entry, or an entry without its schema, does not compile. */
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : never) : never;
const everyEventHasSchemaAndType: SameKeys<EventDataMap, typeof SCHEMAS_BY_TYPE> = true;
void everyEventHasSchemaAndType;

export type EventType = keyof EventDataMap;

/** The `data` type of an event type; `unknown` for a type the contracts do not know. */
export type EventData<T extends string> = T extends EventType ? EventDataMap[T] : unknown;

/** The envelope of one known event type. */
export type EventOf<T extends EventType> = EventEnvelope<T, EventDataMap[T]>;

/** Any known event; `switch (event.type)` narrows `event.data`. */
export type KnownEvent = { [T in EventType]: EventOf<T> }[EventType];

/** The JSON schema (draft-07) of every event's `data`. */
export const EVENT_SCHEMAS: Readonly<Record<EventType, SchemaObject>> = SCHEMAS_BY_TYPE;

export const EVENT_TYPES: readonly EventType[] = Object.freeze(Object.keys(EVENT_SCHEMAS) as EventType[]);

export function isKnownEventType(type: string): type is EventType {
  return Object.hasOwn(EVENT_SCHEMAS, type);
}
