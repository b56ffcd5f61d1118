import { EVENT_TYPES, type EventType } from './events/index.js';

/**
 * The capture pipeline, in order. Each stage is triggered by the event the stage before it
 * publishes, and publishes the event that triggers the next one. A webhook submission and a CSV
 * import row both enter at `lead.received`.
 */
export const PIPELINE = [
  { stage: 'lead', consumes: 'lead.received', publishes: 'lead.captured' },
  { stage: 'enrichment', consumes: 'lead.captured', publishes: 'lead.enriched' },
  { stage: 'scoring', consumes: 'lead.enriched', publishes: 'lead.scored' },
  { stage: 'notification', consumes: 'lead.scored', publishes: 'lead.notified' },
  { stage: 'sequence', consumes: 'lead.notified', publishes: 'lead.enrolled' },
] as const satisfies readonly PipelineStage[];

export interface PipelineStage {
  /** The service or worker that runs the stage. */
  stage: string;
  consumes: EventType;
  publishes: EventType;
}

export interface ReadModelConsumption {
  consumer: string;
  /** Event types or AMQP-style topic patterns (`*` = one word, `#` = zero or more words). */
  consumes: readonly string[];
  purpose: string;
  /** Every process gets every event (no competing consumers, nothing kept while it is down). */
  broadcast?: boolean;
}

/** Who keeps a copy of what, beside the pipeline. */
export const READ_MODELS = [
  {
    consumer: 'lead',
    consumes: ['lead.enriched', 'lead.scored', 'lead.notified', 'lead.enrolled'],
    purpose: 'persist enrichment, score, notifications and enrolments on the lead and write its timeline',
  },
  {
    consumer: 'lead',
    consumes: ['source.*', 'pipeline.*', 'user.*'],
    purpose: 'source names (deleted sources stay visible on their leads), pipelines, assignable users',
  },
  {
    consumer: 'intake',
    consumes: ['source.*'],
    purpose: 'webhook token -> source and its field mappings',
  },
  {
    consumer: 'gateway',
    consumes: ['lead.*'],
    purpose: 'push every lead change to the open dashboards',
    broadcast: true,
  },
] as const satisfies readonly ReadModelConsumption[];

/** Whether an event type matches an AMQP-style topic pattern: `*` is one word, `#` zero or more. */
export function matchesEventPattern(pattern: string, type: string): boolean {
  return matchWords(pattern.split('.'), type.split('.'));
}

function matchWords(pattern: readonly string[], words: readonly string[]): boolean {
  if (pattern.length === 0) return words.length === 0;
  const [head, ...rest] = pattern;
  if (head === '#') {
    // '#' swallows zero words, or one more word and stays in place.
    return matchWords(rest, words) || (words.length > 0 && matchWords(pattern, words.slice(1)));
  }
  if (words.length === 0) return false;
  return (head === '*' || head === words[0]) && matchWords(rest, words.slice(1));
}

/** The known event types a list of types and patterns covers, in EVENT_TYPES order. */
export function expandEventPatterns(patterns: readonly string[]): EventType[] {
  return EVENT_TYPES.filter((type) => patterns.some((pattern) => matchesEventPattern(pattern, type)));
}

/**
 * Throws unless every consumed type (or pattern) names at least one event with a schema.
 * Services call it before subscribing, so a typo or a missing schema stops the process at start
 * instead of dead-lettering every message later.
 */
export function assertConsumable(types: readonly string[]): void {
  const missing = types.filter((pattern) => expandEventPatterns([pattern]).length === 0);
  if (missing.length > 0) {
    throw new Error(`No event schema for consumed event type(s): ${missing.join(', ')}`);
  }
}
