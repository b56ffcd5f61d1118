import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP server on 127.0.0.1 that keeps every JSON body posted to it (outbound webhook deliveries). */
export interface WebhookReceiver<T> {
  url: string;
  received: T[];
  close(): Promise<void>;
}

/** Starts a receiver; the product must allow http and private addresses (OUTBOUND_WEBHOOK_ALLOW_*). */
export async function startWebhookReceiver<T>(): Promise<WebhookReceiver<T>> {
  const received: T[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
