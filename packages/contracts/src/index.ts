export {
  assertConsumable,
  CHAINED_GROUPS,
  CONSUMER_GROUPS,
  type ConsumerGroup,
  type ConsumerGroupName,
  consumerGroup,
  expandEventPatterns,
  type GroupEvent,
  type GroupEventType,
  LEAD_CHANGE_EVENT_TYPES,
  LIVE_STREAM_EVENT_TYPES,
  LIVE_STREAM_SUBSCRIPTION,
  matchesEventPattern,
  PIPELINE,
  type PipelineStage,
  READ_MODELS,
  type ReadModelConsumption,
  type SubscriptionName,
  SYNC_CALLS,
  type SyncCall,
  WEBHOOK_EVENT_TYPES,
} from './chain.js';
export { createEnvelope, ENVELOPE_SCHEMA, type EnvelopeOptions, type EventEnvelope } from './envelope.js';
export {
  type Attribution,
  CLICK_ID_PARAMETERS,
  type ClickIdParameter,
  type ClientInfo,
  CSV_IMPORT_SOURCE,
  type JsonObject,
  LEAD_FIELDS,
  LEAD_STATUSES,
  type LeadField,
  type LeadSnapshot,
  type LeadStatus,
  MAPPING_TARGETS,
  type MappingTarget,
  QUALIFICATIONS,
  type Qualification,
  USER_ROLES,
  type UserRole,
  UTM_PARAMETERS,
  type UtmParameter,
} from './events/common.js';
export {
  EVENT_SCHEMAS,
  EVENT_TYPES,
  type EventData,
  type EventDataMap,
  type EventOf,
  type EventType,
  isKnownEventType,
  type KnownEvent,
} from './events/index.js';
export type {
  Actor,
  Enrichment,
  Enrollment,
  ImportStatus,
  LeadCaptured,
  LeadDeleted,
  LeadEnriched,
  LeadEnrolled,
  LeadEnrollmentStopped,
  LeadImportProgress,
  LeadMerged,
  LeadNotified,
  LeadReceived,
  LeadScored,
  LeadSequenceStepSent,
  LeadUpdated,
  ScoreReason,
  SentNotification,
  SequenceStepStatus,
  SubmissionOrigin,
} from './events/lead.js';
export { IMPORT_STATUSES, SEQUENCE_STEP_STATUSES, SUBMISSION_ORIGINS } from './events/lead.js';
export type {
  PipelineCreated,
  PipelineDeleted,
  PipelineSnapshot,
  PipelineStageSnapshot,
  PipelineUpdated,
} from './events/pipeline.js';
export { propertiesNamed, type SchemaType } from './events/schema-type.js';
export type {
  FieldMappings,
  NameSplitRule,
  SourceCreated,
  SourceDeleted,
  SourceFormat,
  SourceReceiving,
  SourceTokenRotated,
  SourceUpdated,
  UserRef,
} from './events/source.js';
export { DEFAULT_NAME_SPLIT, NAME_SPLIT_RULES, SOURCE_FORMATS } from './events/source.js';
export type { UserCreated, UserDeleted, UserSnapshot, UserUpdated } from './events/user.js';
export { newId } from './ids.js';
export { validateEnvelope, validateEvent } from './validate.js';
export { describeValidationError, type ValidationIssue } from './validation-message.js';
