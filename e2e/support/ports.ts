import { type AddressInfo, createServer, type Server } from 'node:net';

/**
 * `count` distinct TCP ports nothing listens on right now: the OS picks them, all held at once so
 * none is given twice, then released. Another process could take one before its service binds
 * it; on a test box that race is rare enough to accept.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((server) => (server.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}
