import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import Busboy from '@fastify/busboy';
import { AppError, badRequest, payloadTooLarge } from '@lead-capture/kit';

/**
 * What one multipart/form-data body may hold, beside the route's byte limit on the whole body.
 * Fields are kept in memory until the payload is mapped; a file part is never kept (read and
 * dropped as it arrives, recorded as its name and type).
 */
export const MULTIPART_LIMITS = {
  fields: 500,
  /** A form field's value; Jotform's `rawRequest` (every answer as JSON) stays well below it. */
  fieldBytes: 256 * 1024,
  files: 10,
  fileBytes: 512 * 1024,
} as const;

/** A file part as the payload records it: its contents are not kept. */
export interface FilePart {
  filename: string;
  mimetype: string;
}

export type MultipartValue = string | FilePart | Array<string | FilePart>;

/** The message of every body over the route's byte limit, streamed or declared. */
export function bodyTooLargeMessage(bodyLimit: number): string {
  return `Request body is too large (limit: ${bodyLimit} bytes)`;
}

/**
 * Reads a multipart/form-data body as a payload object, as a form post reads (a repeated field
 * becomes an array). The whole body is held to `bodyLimit` while it streams: the byte past it ends
 * the read with 413 (the rest is discarded as it arrives), and a declared Content-Length over it is
 * refused before anything is read. Past MULTIPART_LIMITS (fields, a field's size, files, a file's
 * size) it is 413 too, never a silent truncation.
 */
export function parseMultipartBody(
  headers: IncomingHttpHeaders,
  body: Readable,
  bodyLimit: number,
): Promise<Record<string, MultipartValue>> {
  return new Promise((resolve, reject) => {
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > bodyLimit) {
      reject(payloadTooLarge(bodyTooLargeMessage(bodyLimit)));
      return;
    }
    let parser: InstanceType<typeof Busboy>;
    try {
      parser = new Busboy({
        headers: headers as ConstructorParameters<typeof Busboy>[0]['headers'],
        limits: {
          fields: MULTIPART_LIMITS.fields,
          fieldSize: MULTIPART_LIMITS.fieldBytes,
          files: MULTIPART_LIMITS.files,
          fileSize: MULTIPART_LIMITS.fileBytes,
          parts: MULTIPART_LIMITS.fields + MULTIPART_LIMITS.files,
        },
      });
    } catch (error) {
      reject(badRequest(`Malformed multipart body: ${(error as Error).message}`));
      return;
    }

    const fields = new Map<string, MultipartValue>();
    let settled = false;
    let received = 0;
    const fail = (error: AppError) => {
      if (settled) return;
      settled = true;
      body.unpipe(parser);
      // The rest of the body is read and dropped (no parser behind it), so the answer can go out.
      body.resume();
      reject(error);
    };
    const add = (name: string | undefined, value: string | FilePart) => {
      // A part without a name (RFC 7578 requires one) is no field: busboy names it undefined, which
      // would be kept as a field called "undefined".
      if (name === undefined) return;
      if (name === '__proto__') throw badRequest('Form data must not contain the field "__proto__"');
      const previous = fields.get(name);
      if (previous === undefined) fields.set(name, value);
      else if (Array.isArray(previous)) previous.push(value);
      else fields.set(name, [previous, value]);
    };
    const guarded =
      <Args extends unknown[]>(handle: (...args: Args) => void) =>
      (...args: Args) => {
        try {
          handle(...args);
        } catch (error) {
          fail(error as AppError);
        }
      };

    // Registered before the pipe, so a chunk is counted before the parser sees it.
    body.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > bodyLimit) fail(payloadTooLarge(bodyTooLargeMessage(bodyLimit)));
    });
    // An AppError is the body's own answer (a 408 from the webhook's body deadline).
    body.on('error', (error) =>
      fail(error instanceof AppError ? error : badRequest('The request body was not received whole')),
    );
    body.on('close', () => {
      if (!body.readableEnded) fail(badRequest('The request body was not received whole'));
    });

    parser.on(
      'field',
      guarded((name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
        if (valueTruncated) {
          throw payloadTooLarge(
            `Multipart field "${name.slice(0, 100)}" is larger than ${MULTIPART_LIMITS.fieldBytes} bytes`,
          );
        }
        add(name, value);
      }),
    );
    parser.on(
      'file',
      guarded((name: string, file: Readable, filename: string, _encoding: string, mimetype: string) => {
        file.on('limit', () =>
          fail(
            payloadTooLarge(
              `Multipart file "${name.slice(0, 100)}" is larger than ${MULTIPART_LIMITS.fileBytes} bytes`,
            ),
          ),
        );
        file.resume();
        add(name, { filename, mimetype });
      }),
    );
    parser.on('fieldsLimit', () =>
      fail(payloadTooLarge(`Multipart body has more than ${MULTIPART_LIMITS.fields} fields`)),
    );
    parser.on('filesLimit', () =>
      fail(payloadTooLarge(`Multipart body has more than ${MULTIPART_LIMITS.files} files`)),
    );
    parser.on('partsLimit', () =>
      fail(
        payloadTooLarge(
          `Multipart body has more than ${MULTIPART_LIMITS.fields + MULTIPART_LIMITS.files} parts`,
        ),
      ),
    );
    parser.on('error', (error: Error) => fail(badRequest(`Malformed multipart body: ${error.message}`)));
    parser.on('finish', () => {
      if (settled) return;
      settled = true;
      // fromEntries defines own properties: no name can reach a prototype.
      resolve(Object.fromEntries(fields));
    });
    body.pipe(parser);
  });
}
