/**
 * AMQP topic matching, as RabbitMQ's topic exchange does it: keys and patterns are dot-separated
 * words; `*` matches exactly one word, `#` matches zero or more words.
 */
export function topicMatches(pattern: string, routingKey: string): boolean {
  return matchWords(pattern.split('.'), 0, routingKey.split('.'), 0);
}

function matchWords(pattern: string[], p: number, key: string[], k: number): boolean {
  while (p < pattern.length) {
    const word = pattern[p];
    if (word === '#') {
      // Collapse consecutive '#'; then try every split point for the rest of the pattern.
      while (pattern[p + 1] === '#') p++;
      if (p === pattern.length - 1) return true;
      for (let skip = k; skip <= key.length; skip++) {
        if (matchWords(pattern, p + 1, key, skip)) return true;
      }
      return false;
    }
    if (k >= key.length) return false;
    if (word !== '*' && word !== key[k]) return false;
    p++;
    k++;
  }
  return k === key.length;
}

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
