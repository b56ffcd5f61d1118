import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import { AppError, badRequest, payloadTooLarge, requireScope, unsupportedMediaType } from '@lead-capture/kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { importCsvFile } from '../../csv/import.js';
import { type LeadRouteDeps, requesterOf } from '../deps.js';
import { errorResponses, IMPORT_RESPONSE_SCHEMA } from '../schemas.js';

const CSV_TYPES = ['text/csv', 'application/csv', 'text/plain'];
const FILE_PART = 'file';

function mediaTypeOf(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function tooLarge(maxBytes: number): AppError {
  return payloadTooLarge(`The file is too large (limit: ${maxBytes} bytes)`);
}

/** Passes bytes through, failing with 413 once more than `maxBytes` went by. */
function byteLimit(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > maxBytes) callback(tooLarge(maxBytes));
      else callback(null, chunk);
    },
  });
}

/**
 * Writes the upload to a temporary file: the `file` part of a multipart/form-data body, or a raw
 * CSV body. The file is read twice (count first, then import), never held in memory.
 */
async function spoolUpload(request: FastifyRequest, target: string, maxBytes: number): Promise<void> {
  if (mediaTypeOf(request) !== 'multipart/form-data') {
    await pipeline(request.body as NodeJS.ReadableStream, byteLimit(maxBytes), createWriteStream(target));
    return;
  }
  let received = false;
  try {
    for await (const part of request.parts({ limits: { files: 1, fileSize: maxBytes } })) {
      if (part.type !== 'file') continue;
      if (part.fieldname !== FILE_PART) {
        part.file.resume();
        continue;
      }
      await pipeline(part.file, createWriteStream(target));
      if (part.file.truncated) throw tooLarge(maxBytes);
      received = true;
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof request.server.multipartErrors.RequestFileTooLargeError) throw tooLarge(maxBytes);
    if (error instanceof request.server.multipartErrors.FilesLimitError) {
      throw badRequest(`Send one file, in the part named "${FILE_PART}"`);
    }
    throw badRequest(`Malformed multipart body: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!received) throw badRequest(`The multipart body has no file part named "${FILE_PART}"`);
}

/**
 * POST /api/leads/import: a CSV file with a header row, as multipart/form-data (part "file") or
 * as a raw text/csv body. 200 with what the upload did (ImportResult); the capture of the accepted rows
 * is followed at its statusUrl (routes/leads/imports.ts).
 */
export async function registerImportRoute(
  app: FastifyInstance,
  { context, imports }: LeadRouteDeps,
): Promise<void> {
  const maxBytes = context.config.IMPORT_MAX_BYTES;
  // Its own scope: the CSV and multipart parsers apply to this route only.
  await app.register(async (scope) => {
    await scope.register(multipart, { throwFileSizeLimit: true });
    scope.addContentTypeParser(CSV_TYPES, (_request, payload, done) => done(null, payload));

    scope.post(
      '/api/leads/import',
      {
        onRequest: async (request) => {
          const type = mediaTypeOf(request);
          if (type !== 'multipart/form-data' && !CSV_TYPES.includes(type)) {
            throw unsupportedMediaType(
              `Unsupported Content-Type: ${type.slice(0, 100) || '(none)'}; send the CSV as multipart/form-data (part "${FILE_PART}") or as a text/csv body`,
            );
          }
        },
        preHandler: requireScope('full'),
        schema: {
          response: { 200: IMPORT_RESPONSE_SCHEMA, ...errorResponses(400, 401, 403, 413, 415, 429) },
        },
      },
      async (request) => {
        const requester = requesterOf(request);
        const directory = await mkdtemp(join(tmpdir(), 'lead-import-'));
        try {
          const path = join(directory, 'upload.csv');
          await spoolUpload(request, path, maxBytes);
          return await importCsvFile(context, imports, path, requester);
        } finally {
          await rm(directory, { recursive: true, force: true });
        }
      },
    );
  });
}
