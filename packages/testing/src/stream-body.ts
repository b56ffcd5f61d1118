import { request } from 'node:http';

export interface StreamedAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Bytes of the body written before the answer arrived (the body was never ended). */
  sentBytes: number;
}

/**
 * POSTs a body that never ends: `chunk` again and again (at most `maxBytes`, then nothing more)
 * until the server answers, and resolves with that answer. Only a server that refuses a body while
 * it streams answers at all; one that waits for the end of the body keeps the promise pending.
 * The connection is destroyed once the answer is read.
 */
export function streamUntilAnswered(
  url: string,
  options: { headers: Record<string, string>; chunk: Buffer; maxBytes: number },
): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let answered = false;
    const outgoing = request(url, { method: 'POST', headers: options.headers });
    outgoing.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        outgoing.destroy();
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          sentBytes,
        });
      });
    });
    outgoing.on('error', (error) => {
      // A reset after the answer arrived is the server closing a refused upload: expected.
      if (!answered) reject(error);
    });
    const write = () => {
      while (!answered && sentBytes < options.maxBytes) {
        sentBytes += options.chunk.length;
        if (!outgoing.write(options.chunk)) {
          outgoing.once('drain', write);
          return;
        }
      }
    };
    write();
  });
}
