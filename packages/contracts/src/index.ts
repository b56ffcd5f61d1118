export type { EventEnvelope } from './envelope.js';
