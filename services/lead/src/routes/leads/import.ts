import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import {
  AppError,
  badRequest,
  errorResponses,
  notAudited,
  payloadTooLarge,
  requireScope,
  unsupportedMediaType,
} from '@lead-capture/kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import iconv from 'iconv-lite';
import { COLUMN_TARGETS, type ColumnMapping, type ColumnTarget } from '../../csv/columns.js';
import { MAX_COLUMNS } from '../../csv/dialect.js';
import { type ImportOptions, importCsvFile, previewCsvFile } from '../../csv/import.js';
import { type LeadRouteDeps, requesterOf } from '../deps.js';
import { IMPORT_DRY_RUN_RESPONSE_SCHEMA, IMPORT_RESPONSE_SCHEMA } from '../schemas/imports.js';

const CSV_TYPES = ['text/csv', 'application/csv', 'text/plain'];
const FILE_PART = 'file';

/** How to read the upload: query parameters, or text parts of a multipart body beside the file. */
interface ImportParameters {
  dryRun?: boolean | string;
  mapping?: string;
  delimiter?: string;
  encoding?: string;
  enrol?: boolean | string;
}
const PARAMETERS = ['dryRun', 'mapping', 'delimiter', 'encoding', 'enrol'] as const;

const IMPORT_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    dryRun: {
      type: 'boolean',
      description:
        'true: read the file and answer what an import would do (dialect, column mapping, counts, the first 20 rows as they would be imported) without importing anything',
    },
    mapping: {
      type: 'string',
      maxLength: 65536,
      description: `A JSON object from header names (as in the file; case aside) to what the column holds: ${COLUMN_TARGETS.join(', ')}. Columns it does not name are recognised by their names`,
    },
    delimiter: {
      type: 'string',
      minLength: 1,
      maxLength: 3,
      description:
        'The cell delimiter, when detection (comma, semicolon, tab) is not wanted: one character, or "tab"',
    },
    encoding: {
      type: 'string',
      minLength: 1,
      maxLength: 40,
      description:
        'The text encoding, when detection (UTF-8 with or without BOM, UTF-16 with BOM, else Windows-1252) is not wanted: utf-8, utf-16le, windows-1252, iso-8859-1, shift_jis ...',
    },
    enrol: {
      type: 'boolean',
      description:
        'false: the imported leads are enrolled in no sequence (each row is still captured, enriched, scored and notified); default true, as a webhook submission. The dashboard asks before each import and defaults to false',
    },
  },
} as const;

function parseMapping(text: string): ColumnMapping {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest('mapping must be a JSON object such as {"Contact Mail":"email","Who":"fullName"}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw badRequest('mapping must be a JSON object such as {"Contact Mail":"email","Who":"fullName"}');
  }
  const entries = Object.entries(parsed);
  if (entries.length > MAX_COLUMNS) throw badRequest(`mapping names more than ${MAX_COLUMNS} columns`);
  for (const [header, target] of entries) {
    if (header.trim() === '') throw badRequest('mapping has an empty column name');
    if (!COLUMN_TARGETS.includes(target as ColumnTarget)) {
      throw badRequest(`mapping of "${header.slice(0, 100)}" must be one of: ${COLUMN_TARGETS.join(', ')}`);
    }
  }
  return Object.fromEntries(entries) as ColumnMapping;
}

function parseDelimiter(text: string): string {
  const delimiter = text.toLowerCase() === 'tab' || text === '\\t' ? '\t' : text;
  if (delimiter.length !== 1 || delimiter === '"' || delimiter === '\n' || delimiter === '\r') {
    throw badRequest('delimiter must be one character (not a quote or a line break), or "tab"');
  }
  return delimiter;
}

function parseBoolean(value: boolean | string | undefined, name: string, absent = false): boolean {
  if (value === undefined || typeof value === 'boolean') return value ?? absent;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw badRequest(`${name} must be true or false`);
}

function optionsOf(parameters: ImportParameters): { dryRun: boolean; options: ImportOptions } {
  const options: ImportOptions = { dialect: {}, enrol: parseBoolean(parameters.enrol, 'enrol', true) };
  if (parameters.mapping !== undefined) options.mapping = parseMapping(parameters.mapping);
  if (parameters.delimiter !== undefined) options.dialect!.delimiter = parseDelimiter(parameters.delimiter);
  const encoding: string | undefined = parameters.encoding;
  if (encoding !== undefined) {
    const known = iconv.encodingExists(encoding);
    if (!known) throw badRequest(`Unknown encoding: ${String(encoding).slice(0, 40)}`);
    options.dialect!.encoding = encoding;
  }
  return { dryRun: parseBoolean(parameters.dryRun, 'dryRun'), options };
}

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
 * CSV body. The file is read more than once (dialect, count, import), never held in memory. The
 * text parts of a multipart body are the import's parameters.
 */
async function spoolUpload(
  request: FastifyRequest,
  target: string,
  maxBytes: number,
): Promise<ImportParameters> {
  if (mediaTypeOf(request) !== 'multipart/form-data') {
    await pipeline(request.body as NodeJS.ReadableStream, byteLimit(maxBytes), createWriteStream(target));
    return {};
  }
  let received = false;
  const parameters: ImportParameters = {};
  try {
    for await (const part of request.parts({
      limits: { files: 1, fileSize: maxBytes, fields: PARAMETERS.length, fieldSize: 65536 },
    })) {
      if (part.type === 'field') {
        const name = PARAMETERS.find((parameter) => parameter === part.fieldname);
        if (name === undefined) {
          throw badRequest(
            `Unknown form field "${part.fieldname.slice(0, 100)}"; send "${FILE_PART}" and optionally ${PARAMETERS.join(', ')}`,
          );
        }
        if (parameters[name] !== undefined) throw badRequest(`Send the form field "${name}" once`);
        if (part.valueTruncated) throw badRequest(`The form field "${name}" is longer than 64 KiB`);
        parameters[name] = String(part.value);
        continue;
      }
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
    if (error instanceof request.server.multipartErrors.FieldsLimitError) {
      throw badRequest(`Send at most the form fields ${PARAMETERS.join(', ')}, each under 64 KiB`);
    }
    throw badRequest(`Malformed multipart body: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!received) throw badRequest(`The multipart body has no file part named "${FILE_PART}"`);
  return parameters;
}

/**
 * POST /api/leads/import: a CSV file with a header row, as multipart/form-data (part "file") or
 * as a raw text/csv body. 200 with what the upload did (ImportResult); the capture of the accepted rows
 * is followed at its statusUrl (routes/leads/imports.ts). With dryRun, 200 with what an import would
 * do (DryRunResult) and nothing imported. The dialect is detected unless named (delimiter,
 * encoding); `mapping` names what columns hold where their names are not recognised.
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

    scope.post<{ Querystring: ImportParameters }>(
      '/api/leads/import',
      {
        config: {
          audit: notAudited(
            'Creates leads through the capture chain, each with its own timeline; GET /api/leads/imports lists the imports',
          ),
          // @fastify/multipart reads the raw request itself: kit's body deadline must not take it.
          // Only a full-scope caller gets this far (the guard runs first).
          bodyTimeoutMs: null,
        },
        // Who may import first, then what was sent: both before a byte of the upload is read.
        onRequest: [
          requireScope('full'),
          async (request) => {
            const type = mediaTypeOf(request);
            if (type !== 'multipart/form-data' && !CSV_TYPES.includes(type)) {
              throw unsupportedMediaType(
                `Unsupported Content-Type: ${type.slice(0, 100) || '(none)'}; send the CSV as multipart/form-data (part "${FILE_PART}") or as a text/csv body`,
              );
            }
          },
        ],
        schema: {
          querystring: IMPORT_QUERY_SCHEMA,
          response: {
            200: {
              description: 'The import (or, with dryRun, what an import would do)',
              oneOf: [IMPORT_RESPONSE_SCHEMA, IMPORT_DRY_RUN_RESPONSE_SCHEMA],
            },
            ...errorResponses(400, 401, 403, 413, 415, 429),
          },
        },
      },
      async (request) => {
        const requester = requesterOf(request);
        const query = request.query as ImportParameters;
        const directory = await mkdtemp(join(tmpdir(), 'lead-import-'));
        try {
          const path = join(directory, 'upload.csv');
          const fields = await spoolUpload(request, path, maxBytes);
          for (const name of PARAMETERS) {
            if (fields[name] !== undefined && query[name] !== undefined) {
              throw badRequest(`Give ${name} once: as a query parameter or as a form field`);
            }
          }
          const { dryRun, options } = optionsOf({ ...query, ...fields });
          if (dryRun) return await previewCsvFile(context, path, options);
          return await importCsvFile(context, imports, path, requester, options);
        } finally {
          await rm(directory, { recursive: true, force: true });
        }
      },
    );
  });
}
