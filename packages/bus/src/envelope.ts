import { type EventEnvelope, newId } from '@lead-capture/contracts';
import { InvalidEventError } from './errors.js';
import { invalidEventType, invalidTopicPattern } from './topic.js';
import type { EventValidator, PublishOptions, SubscribeOptions } from './types.js';

/** Builds the envelope for `publish` after checking the type and the payload. */
export function buildEnvelope<TData>(
  type: string,
  data: TData,
  options: PublishOptions | undefined,
  validate: EventValidator | undefined,
): EventEnvelope<string, TData> {
  const envelope: EventEnvelope<string, TData> = {
    id: options?.id ?? newId(),
    type,
    occurredAt: new Date().toISOString(),
    correlationId: options?.correlationId ?? newId(),
    ...(options?.causationId === undefined ? {} : { causationId: options.causationId }),
    data,
  };
  assertPublishable(envelope, validate);
  return envelope;
}

/** Checks an envelope about to be published; throws InvalidEventError with the reason. */
export function assertPublishable(envelope: EventEnvelope, validate: EventValidator | undefined): void {
  const problem = envelopeProblem(envelope) ?? validate?.(envelope.type, envelope.data) ?? null;
  if (problem !== null) throw new InvalidEventError(problem);
}

/** What is wrong with a value that should be an envelope, or null. */
export function envelopeProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'Message is not an event envelope (expected a JSON object)';
  }
  const record = value as Record<string, unknown>;
  for (const field of ['id', 'type', 'occurredAt', 'correlationId'] as const) {
    if (typeof record[field] !== 'string' || record[field] === '') {
      return `Event envelope field "${field}" must be a non-empty string`;
    }
  }
  if (record.causationId !== undefined && typeof record.causationId !== 'string') {
    return 'Event envelope field "causationId" must be a string';
  }
  if (!('data' in record)) return 'Event envelope has no "data"';
  return invalidEventType(record.type as string);
}

export type ParsedMessage = { envelope: EventEnvelope } | { problem: string };

/** Reads a message body at the consumer's edge: JSON, envelope shape, then the payload schema. */
export function parseMessage(body: string, validate: EventValidator | undefined): ParsedMessage {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { problem: `Unparseable message: ${errorMessage(error)}` };
  }
  const shape = envelopeProblem(value);
  if (shape !== null) return { problem: shape };
  const envelope = value as EventEnvelope;
  const invalid = validate?.(envelope.type, envelope.data) ?? null;
  if (invalid !== null) return { problem: `Invalid payload: ${invalid}` };
  return { envelope };
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

export interface RetryPolicy {
  maxAttempts: number;
  retryDelayMs: (retry: number) => number;
}

export const DEFAULT_PREFETCH = 16;
export const DEFAULT_MAX_ATTEMPTS = 5;

/** 1 s, 5 s, 25 s, 2 min, then 10 min: quick for a blip, patient for an outage. */
export function defaultRetryDelayMs(retry: number): number {
  return Math.min(1000 * 5 ** (retry - 1), 600_000);
}

export function retryPolicy(options: SubscribeOptions): RetryPolicy {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new RangeError(`maxAttempts must be a positive integer, got ${maxAttempts}`);
  }
  const delay = options.retryDelayMs ?? defaultRetryDelayMs;
  return {
    maxAttempts,
    retryDelayMs: (retry) => {
      const ms = Math.round(delay(retry));
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`retryDelayMs(${retry}) returned ${ms}`);
      return ms;
    },
  };
}

export function validatePrefetch(prefetch: number | undefined): number {
  const value = prefetch ?? DEFAULT_PREFETCH;
  if (!Number.isInteger(value) || value < 1 || value > 65_535) {
    throw new RangeError(`prefetch must be an integer from 1 to 65535, got ${value}`);
  }
  return value;
}

/**
 * Checks what every bus requires of a subscription (a group, at least one valid type or pattern, a
 * prefetch and a retry policy in range) and answers the prefetch and the policy.
 */
export function checkedSubscription(options: SubscribeOptions): { prefetch: number; policy: RetryPolicy } {
  if (!options.group) throw new TypeError('subscribe: group is required');
  if (!Array.isArray(options.types) || options.types.length === 0) {
    throw new TypeError(`subscribe(${options.group}): types must list at least one event type`);
  }
  for (const type of options.types) {
    const problem = invalidTopicPattern(type);
    if (problem) throw new TypeError(`subscribe(${options.group}): ${problem}`);
  }
  return { prefetch: validatePrefetch(options.prefetch), policy: retryPolicy(options) };
}

/** Error messages go into headers and documents; keep them bounded. */
export function truncate(text: string, max = 1000): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
