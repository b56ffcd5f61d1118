export { COLLECTIONS, SUBMISSION_OUTCOMES, type SubmissionOutcome } from './collections.js';
export { INTAKE_CONFIG, type IntakeConfig } from './config.js';
export { createIntakeService } from './service.js';
