export { PIPELINES_COLLECTION, REGISTRY_COLLECTION, SEED_PIPELINE_ID } from './pipelines.js';
export { createPipelineService, type PipelineServiceOptions } from './service.js';
