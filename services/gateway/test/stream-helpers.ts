import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { waitFor } from '@lead-capture/testing';
import { expect } from 'vitest';
import type { TestGateway } from './helpers.js';

// What the stream*.test.ts files share.

export interface Ticket {
  ticket: string;
  expiresAt: string;
}

/** Listens on a free port of 127.0.0.1; the base URL. */
export async function listen(gateway: TestGateway): Promise<string> {
  await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = gateway.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

export async function ticketFor(gateway: TestGateway, headers: Record<string, string>): Promise<Ticket> {
  const response = await gateway.app.inject({ method: 'POST', url: '/api/stream/tickets', headers });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Ticket>();
}

export function leadUpdated(notes = 'called back') {
  return { leadId: randomUUID(), changes: { notes } };
}

/** A stream opened over a raw socket that never reads what it is sent. */
export async function openStalledStream(baseUrl: string, token: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let head = '';
  socket.on('data', (chunk) => {
    head += chunk.toString('latin1');
    if (head.includes('\r\n\r\n')) socket.pause();
  });
  socket.on('error', () => {});
  socket.write(`GET /api/stream HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  await waitFor('the stalled stream’s headers', () => head.includes('\r\n\r\n'));
  expect(head.startsWith('HTTP/1.1 200')).toBe(true);
  return socket;
}
