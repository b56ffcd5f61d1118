export type { EventEnvelope } from '@lead-capture/contracts';
export { InvalidEventError, UnconfirmedError, UnroutableError } from './errors.js';
export {
  createInProcessBus,
  type InProcessBusOptions,
  type InProcessBusStats,
  type InProcessMessageBus,
} from './in-process/bus.js';
export { BACKGROUND_PACE_MS, FOREGROUND_QUIET_MS, ForegroundWork } from './in-process/foreground.js';
export { createRabbitBus, type RabbitBusOptions, type ReconnectOptions } from './rabbit/bus.js';
export { HEADERS as RABBIT_HEADERS, type RabbitNames, rabbitNames } from './rabbit/names.js';
export { topicMatches } from './topic.js';
export type * from './types.js';
