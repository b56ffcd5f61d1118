export type { LeadField } from '@lead-capture/contracts';
export { type FittedCustomData, fitCustomData } from './custom.js';
export { emailFieldProblem } from './email.js';
export { type LeadgenRef, leadgenRefsOf } from './formats/index.js';
export { type SplitName, splitFullName } from './full-name.js';
export { nestingDepth, PAYLOAD_LIMITS, payloadShapeProblem } from './limits.js';
export {
  FIELD_MAX_LENGTH,
  type FieldOrigin,
  type MapOptions,
  type MappedSubmission,
  type MappingTrace,
  type MapSubmissionResult,
  mapSubmission,
  REFERRER_MAX_LENGTH,
  UTM_VALUE_MAX_LENGTH,
} from './map-submission.js';
