import { matchesEventPattern } from '@lead-capture/contracts';

/** AMQP topic matching, shared with the contracts so the buses and the chain table agree. */
export const topicMatches = matchesEventPattern;

/** An event type is a routing key: non-empty dot-separated words without wildcards. */
export function invalidEventType(type: string): string | null {
  if (typeof type !== 'string' || type.length === 0) return 'Event type must be a non-empty string';
  if (type.length > 255) return `Event type is longer than 255 characters: ${type.slice(0, 40)}...`;
  if (/[*#]/.test(type)) return `Event type must not contain wildcards: ${type}`;
  return null;
}

/** A binding pattern: non-empty, at most 255 characters (AMQP's short string). */
export function invalidTopicPattern(pattern: string): string | null {
  if (typeof pattern !== 'string' || pattern.length === 0)
    return 'Subscription types must be non-empty strings';
  if (pattern.length > 255)
    return `Subscription type is longer than 255 characters: ${pattern.slice(0, 40)}...`;
  return null;
}
