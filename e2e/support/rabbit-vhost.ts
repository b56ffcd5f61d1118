import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AMQP_URL, isCI, requireService, uniquePrefix, waitFor } from '@lead-capture/testing';

const run = promisify(execFile);
const RABBITMQCTL = 'rabbitmqctl';

/**
 * A virtual host of its own on the shared broker: the services under test declare their queues
 * with their production names, so a test file isolates them by vhost instead of by prefix.
 */
export interface RabbitVhost {
  name: string;
  /** AMQP_URL pointing at this vhost. */
  url: string;
  /** Messages waiting and delivered but not yet acknowledged in one queue of this vhost, and its consumers. */
  queueStats(queue: string): Promise<QueueStats>;
  /** Deletes the vhost with every queue and exchange in it (connections to it are closed). */
  delete(): Promise<void>;
}

/**
 * Whether the tests that need their own vhost can run: the broker must answer and `rabbitmqctl`
 * must work. Like requireService, locally a missing piece skips (false), in CI it fails.
 */
export async function requireRabbitVhosts(): Promise<boolean> {
  if (!(await requireService('RabbitMQ', AMQP_URL))) return false;
  try {
    await run(RABBITMQCTL, ['--version']);
    return true;
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? `${RABBITMQCTL} is not on the PATH`
        : `${RABBITMQCTL} failed: ${(error as Error).message}`;
    const message = `${reason}; the end-to-end tests create a RabbitMQ vhost per file with it (install the RabbitMQ server's CLI tools, run where they can reach the broker's node)`;
    if (isCI) throw new Error(message);
    console.warn(`[tests] ${message}: skipping the tests that need it`);
    return false;
  }
}

export interface QueueStats {
  ready: number;
  unacknowledged: number;
  consumers: number;
}

export async function createRabbitVhost(label: string): Promise<RabbitVhost> {
  const name = uniquePrefix(label);
  await run(RABBITMQCTL, ['add_vhost', name]);
  await run(RABBITMQCTL, ['set_permissions', '-p', name, 'guest', '.*', '.*', '.*']);
  const url = new URL(AMQP_URL);
  url.pathname = `/${encodeURIComponent(name)}`;
  return {
    name,
    url: url.toString(),
    async queueStats(queue) {
      const { stdout } = await run(RABBITMQCTL, [
        'list_queues',
        '-p',
        name,
        '--quiet',
        '--no-table-headers',
        'name',
        'messages_ready',
        'messages_unacknowledged',
        'consumers',
      ]);
      for (const line of stdout.split('\n')) {
        const [queueName, ready, unacknowledged, consumers] = line.trim().split(/\s+/);
        if (queueName === queue) {
          return {
            ready: Number(ready),
            unacknowledged: Number(unacknowledged),
            consumers: Number(consumers),
          };
        }
      }
      throw new Error(`No queue ${queue} in vhost ${name}:\n${stdout}`);
    },
    async delete() {
      await run(RABBITMQCTL, ['delete_vhost', name]);
    },
  };
}

/**
 * Waits until none of the queues holds a message, ready or in flight: every delivery so far has
 * been handled and acknowledged, so a redelivery that could double something has already happened.
 */
export async function queuesDrained(
  vhost: RabbitVhost,
  queues: readonly string[],
  timeoutMs = 15_000,
): Promise<void> {
  let last: Record<string, QueueStats> = {};
  await waitFor(
    `${queues.join(', ')} to drain`,
    async () => {
      const stats = await Promise.all(queues.map((queue) => vhost.queueStats(queue)));
      last = Object.fromEntries(queues.map((queue, i) => [queue, stats[i] as QueueStats]));
      return stats.every(({ ready, unacknowledged }) => ready === 0 && unacknowledged === 0)
        ? true
        : undefined;
    },
    timeoutMs,
    () => JSON.stringify(last),
  );
}

/**
 * Stops the RabbitMQ application of the node (`rabbitmqctl stop_app`: every connection of every
 * vhost drops and new ones are refused), runs `whileStopped`, and starts it again
 * (`start_app`, then `await_startup`) whatever happened: the shared broker is always left running.
 */
export async function withBrokerStopped<T>(whileStopped: () => Promise<T>): Promise<T> {
  try {
    await run(RABBITMQCTL, ['stop_app']);
    return await whileStopped();
  } finally {
    await run(RABBITMQCTL, ['start_app']);
    await run(RABBITMQCTL, ['await_startup']);
  }
}
