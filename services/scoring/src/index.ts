export { DEFAULT_MODEL, type ScoringModel, WEIGHT_KEYS, type WeightKey } from './model.js';
export { type LeadScore, scoreLead } from './score.js';
export { createScoringService, SCORE_GROUP } from './service.js';
export { SETTINGS_COLLECTION } from './settings.js';
export { RESULTS_COLLECTION, scoredEventId } from './worker.js';
