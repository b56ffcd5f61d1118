import { connect, type Socket } from 'node:net';

export interface StalledPost {
  socket: Socket;
  /** Everything the server has answered so far, head and body, as text. */
  answer(): string;
}

/**
 * A raw connection that POSTs the head of a request declaring a `length`-byte body and sends only
 * `start` of it, then nothing: a sender that stopped half-way. The test may write the rest on
 * `socket`; it destroys the socket when done.
 */
export function stalledPost(
  port: number,
  path: string,
  options: { contentType: string; length: number; start: string },
): StalledPost {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += String(chunk)));
  socket.on('error', () => undefined);
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: ${options.contentType}\r\n` +
      `content-length: ${options.length}\r\n\r\n${options.start}`,
  );
  return { socket, answer: () => received };
}
