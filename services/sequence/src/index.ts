export { loadSequenceConfig, SEQUENCE_CONFIG, type SequenceConfig } from './config.js';
export {
  ENROLLMENT_STATUSES,
  ENROLLMENTS_COLLECTION,
  type EnrollmentStatus,
  MESSAGES_COLLECTION,
} from './enrollments.js';
export { LEAD_STATES_COLLECTION } from './lead-states.js';
export { SEQUENCES_COLLECTION } from './sequences.js';
export {
  createSequenceService,
  ENROL_GROUP,
  LEAD_CHANGES_GROUP,
  type SequenceServiceOptions,
} from './service.js';
