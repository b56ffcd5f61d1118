import type { ConsumeMessage, GetMessage, Options } from 'amqplib';
import { HEADERS } from './names.js';

/**
 * A consumed message travels on as a copy — to a delay queue (retry), to the dead-letter queue, back
 * to its group's queue (replay) — published through the default exchange under a queue's name. These
 * keep the copy's identity and the publisher's headers, and recover the event's routing key.
 */

type Received = ConsumeMessage | GetMessage;

/** Properties for a copy of a consumed message (retry, dead letter, replay): same identity, fresh routing. */
export function copyProperties(message: Received): Options.Publish {
  const properties = message.properties;
  return {
    contentType: properties.contentType ?? 'application/json',
    messageId: properties.messageId,
    correlationId: properties.correlationId,
    type: properties.type,
    timestamp: properties.timestamp,
    appId: properties.appId,
  };
}

/**
 * The publisher's own headers, without the bus's (`x-attempt`, `x-dead-*` ...) and the broker's
 * `x-death` history: RabbitMQ drops a message whose x-death shows it already expired from the same
 * delay queue (dead-letter cycle detection), so a copy must not carry it.
 */
export function publisherHeaders(message: Received): Record<string, unknown> {
  const headers: Record<string, unknown> = { [HEADERS.routingKey]: originalRoutingKey(message) };
  for (const [name, value] of Object.entries(message.properties.headers ?? {})) {
    if (!name.startsWith('x-')) headers[name] = value;
  }
  return headers;
}

/** The event's routing key (its type), also when the message is a copy that came through a queue's name. */
export function originalRoutingKey(message: Received): string {
  const carried: unknown = message.properties.headers?.[HEADERS.routingKey];
  return typeof carried === 'string' ? carried : message.fields.routingKey;
}
