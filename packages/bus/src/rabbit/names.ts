/**
 * Every name the RabbitMQ bus declares, in one place. With namePrefix `p` and group `g`:
 *
 * | what                         | name                    |
 * |------------------------------|-------------------------|
 * | topic exchange               | `p.lead-capture`        |
 * | group queue                  | `p.g`                   |
 * | delay queue for one delay    | `p.g.retry.<delayMs>`   |
 * | dead-letter queue            | `p.g.dead`              |
 *
 * Without a prefix the names are the bare `lead-capture`, `g`, `g.retry.1000`, `g.dead`.
 */
export interface RabbitNames {
  exchange: string;
  queue(group: string): string;
  retryQueue(group: string, delayMs: number): string;
  deadQueue(group: string): string;
}

export function rabbitNames(options: { namePrefix?: string; exchange?: string } = {}): RabbitNames {
  const prefixed = (name: string) => (options.namePrefix ? `${options.namePrefix}.${name}` : name);
  return {
    exchange: prefixed(options.exchange ?? 'lead-capture'),
    queue: (group) => prefixed(group),
    retryQueue: (group, delayMs) => `${prefixed(group)}.retry.${delayMs}`,
    deadQueue: (group) => `${prefixed(group)}.dead`,
  };
}

/** AMQP header names the bus sets; `x-` keeps them apart from anything a publisher adds. */
export const HEADERS = {
  attempt: 'x-attempt',
  /** The event's routing key; copies travel through the default exchange under a queue's name. */
  routingKey: 'x-routing-key',
  lastError: 'x-last-error',
  group: 'x-group',
  deadReason: 'x-dead-reason',
  deadAttempts: 'x-dead-attempts',
  deadAt: 'x-dead-at',
} as const;
