import { createServer, connect as netConnect, type Socket } from 'node:net';

/**
 * A TCP proxy in front of the broker, so a test can cut its own bus's connection (and refuse new
 * ones) without touching anyone else's connections to the shared RabbitMQ.
 */
export interface TcpProxy {
  /** The broker URL rewritten to go through the proxy. */
  readonly url: string;
  /** Destroys every proxied connection, as a network failure would. */
  dropAll(): void;
  /** While true, new connections are accepted and closed at once (broker unreachable). */
  refuse(refusing: boolean): void;
  /** Connections refused so far: a client's reconnect attempts, for tests to wait on instead of sleeping. */
  readonly refused: number;
  close(): Promise<void>;
}

export async function startTcpProxy(brokerUrl: string): Promise<TcpProxy> {
  const target = new URL(brokerUrl);
  const targetPort = Number(target.port || 5672);
  const pairs = new Set<[Socket, Socket]>();
  let refusing = false;
  let refused = 0;

  const server = createServer((client) => {
    if (refusing) {
      refused++;
      client.destroy();
      return;
    }
    const upstream = netConnect(targetPort, target.hostname);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const teardown = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) {
      socket.on('error', teardown);
      socket.on('close', teardown);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');

  const url = new URL(brokerUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);

  const dropAll = () => {
    for (const [client, upstream] of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return {
    url: url.toString(),
    dropAll,
    get refused() {
      return refused;
    },
    refuse: (value) => {
      refusing = value;
    },
    close: async () => {
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
