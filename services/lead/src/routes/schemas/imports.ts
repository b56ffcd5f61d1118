import type { SchemaType } from '@lead-capture/contracts';
import { closedObject, pagedListSchema, pagedQuerySchema } from '@lead-capture/kit';

/** CSV imports: the answer to an upload (or its dry run), and the imports' progress. */

export const IMPORT_ID_PARAMS_SCHEMA = closedObject({ importId: { type: 'string', format: 'uuid' } });
export type ImportIdParams = SchemaType<typeof IMPORT_ID_PARAMS_SCHEMA>;

export const IMPORT_LIST_QUERY_SCHEMA = pagedQuerySchema();
export type ImportListQuery = SchemaType<typeof IMPORT_LIST_QUERY_SCHEMA>;

const rowErrors = {
  type: 'array',
  description: 'The first 1,000 failed rows, by spreadsheet row (header = 1)',
  items: closedObject(
    {
      row: { type: 'integer' },
      error: { type: 'string', description: 'Why the row was not imported' },
      value: {
        type: 'string',
        description:
          'The row\'s cells as in the file, joined by ", " (at most 200 characters); absent when the row was accepted and its capture failed',
      },
    },
    ['row', 'error'],
  ),
} as const;

const importStatus = { type: 'string', enum: ['in_progress', 'done'] } as const;

/** What the reading of a CSV file found: in the answers to an import and to a dry run. */
const importFileProperties = {
  dialect: {
    ...closedObject({
      encoding: { type: 'string', description: 'utf-8, utf-16le, utf-16be, windows-1252, or the one named' },
      bom: { type: 'boolean', description: 'The file starts with a byte order mark' },
      delimiter: { type: 'string', description: 'The cell delimiter: , ; or a tab (or the one named)' },
    }),
    description: 'How the file was read: detected, or as named by the encoding and delimiter parameters',
  },
  columns: {
    type: 'array',
    description: 'Each column of the header row, in order, and what it is imported as',
    items: closedObject({
      header: { type: 'string' },
      mapsTo: {
        type: 'string',
        enum: ['email', 'firstName', 'lastName', 'phone', 'company', 'fullName', 'custom', 'ignored'],
        description: 'fullName is split into firstName and lastName when the row has neither',
      },
      mapped: {
        type: 'boolean',
        description: 'Set by the mapping parameter rather than recognised by name',
      },
    }),
  },
  skipped: {
    type: 'integer',
    description: 'Blank rows and report lines (totals, confidentiality, copyright) not imported',
  },
  skippedRows: {
    type: 'array',
    description: 'The first 1,000 skipped rows, by spreadsheet row (header = 1)',
    items: closedObject({ row: { type: 'integer' }, reason: { type: 'string' } }),
  },
  trimmed: {
    type: 'integer',
    description:
      'Rows imported without some of their custom columns: a lead keeps at most 100 custom fields and 32 KiB of custom data, so the columns past them (in column order) are left out, each value whole',
  },
  trimmedRows: {
    type: 'array',
    description: 'The first 1,000 trimmed rows, by spreadsheet row (header = 1), with the columns left out',
    items: closedObject({
      row: { type: 'integer' },
      reason: {
        type: 'string',
        description:
          'e.g. "37 custom columns not kept: a lead keeps at most 100 custom fields (first dropped: Last Activity Date)"',
      },
    }),
  },
} as const;

export const IMPORT_RESPONSE_SCHEMA = closedObject({
  importId: { type: 'string' },
  status: importStatus,
  rows: { type: 'integer', description: 'Data rows of the file, blank rows and report lines aside' },
  accepted: { type: 'integer', description: 'Rows handed to the capture chain; leads follow as it runs' },
  imported: { type: 'integer', description: 'The same as accepted (its first name)' },
  duplicates: {
    type: 'integer',
    description: 'Accepted rows that repeat an existing lead or an earlier row, as seen at upload',
  },
  failed: { type: 'integer', description: 'Rows refused at upload' },
  errors: rowErrors,
  statusUrl: { type: 'string', description: 'GET it to follow the capture of the rows' },
  ...importFileProperties,
});

/** The answer to POST /api/leads/import?dryRun=true: nothing is imported. */
export const IMPORT_DRY_RUN_RESPONSE_SCHEMA = closedObject({
  dryRun: { type: 'boolean', enum: [true] },
  rows: { type: 'integer', description: 'Data rows of the file, blank rows and report lines aside' },
  accepted: { type: 'integer', description: 'Rows an import would hand to the capture chain' },
  duplicates: {
    type: 'integer',
    description: 'Rows that repeat an existing lead or an earlier row, as the upload sees them now',
  },
  failed: { type: 'integer', description: 'Rows an import would refuse' },
  errors: rowErrors,
  ...importFileProperties,
  preview: {
    type: 'array',
    description: 'The first 20 rows an import would accept, as they would be imported',
    items: closedObject({
      row: { type: 'integer' },
      fields: closedObject(
        {
          email: { type: 'string' },
          firstName: { type: 'string' },
          lastName: { type: 'string' },
          phone: { type: 'string' },
          company: { type: 'string' },
        },
        [],
      ),
      custom: { type: 'object', additionalProperties: { type: 'string' } },
    }),
  },
});

const importSummaryProperties = {
  importId: { type: 'string' },
  status: importStatus,
  rows: { type: 'integer', description: 'Data rows of the file, blank lines aside' },
  accepted: { type: 'integer', description: 'Rows handed to the capture chain' },
  created: { type: 'integer', description: 'Leads created (not duplicates)' },
  duplicates: { type: 'integer', description: 'Leads created and flagged as duplicates' },
  failed: { type: 'integer', description: 'Rows refused at upload, plus accepted rows the capture failed' },
  createdAt: { type: 'string' },
  finishedAt: { type: ['string', 'null'] },
  enrol: {
    type: 'boolean',
    description: "Whether the sequences may enrol the import's leads (the import's enrol parameter)",
  },
} as const;

const IMPORT_SUMMARY_SCHEMA = closedObject(importSummaryProperties);

export const IMPORT_STATUS_SCHEMA = closedObject({
  ...importSummaryProperties,
  errors: rowErrors,
  skipped: importFileProperties.skipped,
  skippedRows: importFileProperties.skippedRows,
  trimmed: importFileProperties.trimmed,
  trimmedRows: importFileProperties.trimmedRows,
});

export const IMPORT_LIST_RESPONSE_SCHEMA = pagedListSchema(IMPORT_SUMMARY_SCHEMA);
