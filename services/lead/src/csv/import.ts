import { randomUUID } from 'node:crypto';
import { emailFieldProblem, FIELD_MAX_LENGTH, safeCustomData } from '@lead-capture/capture';
import { CSV_IMPORT_SOURCE, type JsonObject, LEAD_FIELDS, type LeadField } from '@lead-capture/contracts';
import { badRequest, payloadTooLarge } from '@lead-capture/kit';
import { parseFile } from 'fast-csv';
import type { LeadContext } from '../context.js';
import { type ImportTracker, MAX_LISTED_ERRORS } from '../imports.js';
import { type Requester, timelineActor } from '../lead-actions.js';
import { identityKeysOf, normalizeFields } from '../normalize.js';
import type { ImportRowError } from '../store.js';

/**
 * Header names recognised for each standard field, compared without case, spaces or punctuation
 * ("First Name", "first_name", "FIRSTNAME" and "first-name" are all firstName). The aliases cover
 * the contact exports of HubSpot, Salesforce and Pipedrive.
 */
const HEADER_ALIASES: Record<LeadField, readonly string[]> = {
  email: ['email', 'emailaddress', 'mail'],
  firstName: ['firstname', 'first', 'givenname', 'forename'],
  lastName: ['lastname', 'last', 'surname', 'familyname'],
  phone: ['phone', 'phonenumber', 'telephone', 'mobile', 'mobilephone', 'mobilenumber'],
  company: ['company', 'companyname', 'organization', 'organisation', 'organizationname', 'accountname'],
};

const FIELD_BY_ALIAS = new Map(
  LEAD_FIELDS.flatMap((field) => HEADER_ALIASES[field].map((alias) => [alias, field] as const)),
);

const PUBLISH_BATCH = 200;

/** A practical e-mail check: something@domain.tld, no spaces, at most 254 characters. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@.]+$/;

/** The answer to the upload: what happened to each row so far; the leads follow as the chain runs. */
export interface ImportResult {
  importId: string;
  /** `done` only when no row was handed to the chain (or the chain already processed them all). */
  status: 'in_progress' | 'done';
  /** Data rows of the file, blank lines aside. */
  rows: number;
  /** Rows handed to the capture chain. */
  accepted: number;
  /** The same number as `accepted`, under its first name. */
  imported: number;
  /** Accepted rows that repeat an existing lead or an earlier row, as seen at upload. */
  duplicates: number;
  /** Rows refused at upload. */
  failed: number;
  errors: { row: number; error: string }[];
  /** Where to follow the capture of the rows. */
  statusUrl: string;
}

type Column = { kind: 'field'; field: LeadField } | { kind: 'custom'; key: string } | { kind: 'ignored' };

function normalizeHeader(header: string): string {
  return header.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** What each column of the file holds; a header naming a field twice or a bad key is a 400. */
export function mapHeader(cells: string[]): Column[] {
  const seenFields = new Map<LeadField, string>();
  const seenCustom = new Set<string>();
  const columns = cells.map((cell, index): Column => {
    const header = (index === 0 ? cell.replace(/^\uFEFF/, '') : cell).trim();
    const field = FIELD_BY_ALIAS.get(normalizeHeader(header));
    if (field) {
      const earlier = seenFields.get(field);
      if (earlier !== undefined) {
        throw badRequest(`Columns "${earlier}" and "${header}" both hold ${field}; keep one of them`);
      }
      seenFields.set(field, header);
      return { kind: 'field', field };
    }
    if (header === '') return { kind: 'ignored' };
    // Its key is made safe with the row's custom data (the webhook's rules: see mapRow).
    if (seenCustom.has(header)) throw badRequest(`Column "${header}" appears twice in the header row`);
    seenCustom.add(header);
    return { kind: 'custom', key: header };
  });
  if (seenFields.size === 0) {
    throw badRequest(
      `The header row names none of the recognised columns: ${LEAD_FIELDS.join(', ')} (first row: ${cells
        .slice(0, 5)
        .join(', ')
        .slice(0, 200)})`,
    );
  }
  return columns;
}

export type RowOutcome =
  | { kind: 'blank' }
  | { kind: 'failed'; error: string }
  | { kind: 'lead'; fields: Partial<Record<LeadField, string>>; custom: JsonObject };

/**
 * One data row: its standard fields and custom metadata, or why it cannot be imported. Custom
 * metadata follows the webhook's rules (capture's safeCustomData): a leading `$`, `.` and NUL in a
 * key become `_`, `__proto__` / `constructor` / `prototype` are dropped, and a row over 100 custom
 * fields or 32 KiB of custom data fails; so does a field longer than the webhook allows.
 */
export function mapRow(columns: Column[], cells: string[]): RowOutcome {
  if (cells.every((cell) => cell.trim() === '')) return { kind: 'blank' };
  if (cells.length > columns.length) {
    return { kind: 'failed', error: `Row has ${cells.length} cells but the header has ${columns.length}` };
  }
  const fields: Partial<Record<LeadField, string>> = {};
  const custom: [string, string][] = [];
  columns.forEach((column, index) => {
    const value = cells[index]?.trim() ?? '';
    if (value === '') return;
    if (column.kind === 'field') fields[column.field] = value;
    else if (column.kind === 'custom') custom.push([column.key, value]);
  });
  if (Object.keys(fields).length === 0) {
    return { kind: 'failed', error: 'Row has no email, first name, last name, phone or company' };
  }
  if (fields.email !== undefined) {
    // The webhook's rule first (one mailbox, never a list or a display name), then the import's own.
    const problem = emailFieldProblem(fields.email);
    if (problem) return { kind: 'failed', error: `email ${problem}` };
    if (fields.email.length > 254 || !EMAIL.test(fields.email)) {
      return { kind: 'failed', error: `Invalid email: ${fields.email.slice(0, 100)}` };
    }
  }
  for (const field of LEAD_FIELDS) {
    const value = fields[field];
    // Characters (code points), as the webhook counts them.
    if (value !== undefined && value.length > FIELD_MAX_LENGTH[field]) {
      if (Array.from(value).length > FIELD_MAX_LENGTH[field]) {
        return { kind: 'failed', error: `${field} must be at most ${FIELD_MAX_LENGTH[field]} characters` };
      }
    }
  }
  const safe = safeCustomData(custom);
  if (!safe.ok) return { kind: 'failed', error: safe.error };
  return { kind: 'lead', fields, custom: safe.custom as JsonObject };
}

async function* records(path: string): AsyncGenerator<string[]> {
  const parser = parseFile(path, { headers: false, ignoreEmpty: false });
  try {
    for await (const record of parser) {
      if (!Array.isArray(record)) continue;
      yield record.map((cell) => (typeof cell === 'string' ? cell : String(cell ?? '')));
    }
  } catch (error) {
    throw badRequest(`The file is not valid CSV: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The first pass: the header's columns and the number of data rows (blank lines aside), stopping
 * as soon as there are more than `limit`. Nothing is written before it succeeds.
 */
async function survey(path: string, limit: number): Promise<{ columns: Column[]; rows: number }> {
  let columns: Column[] | null = null;
  let rows = 0;
  for await (const cells of records(path)) {
    if (!columns) {
      columns = mapHeader(cells);
      continue;
    }
    if (cells.every((cell) => cell.trim() === '')) continue;
    if (++rows > limit) break;
  }
  if (!columns) throw badRequest('The file is empty; expected a header row and data rows');
  return { columns, rows };
}

interface PendingRow {
  row: number;
  fields: Partial<Record<LeadField, string>>;
  custom: JsonObject;
  keys: string[];
  /** A row above in the same file shares an e-mail or phone with it. */
  repeatsEarlierRow: boolean;
}

/**
 * Imports a CSV file already on disk: refuses it whole (413) when it has more than IMPORT_MAX_ROWS
 * data rows, before anything is written; otherwise every valid row enters the capture chain as a
 * lead.received of origin 'import', exactly like a webhook submission, and the import is recorded
 * so its capture can be followed (imports.ts). `duplicates` is what the upload can see: rows that
 * share an e-mail or phone with an existing lead or a row above; the status counts what the capture
 * actually flagged.
 */
export async function importCsvFile(
  context: LeadContext,
  imports: ImportTracker,
  path: string,
  by: Requester,
): Promise<ImportResult> {
  const { collections, bus, config } = context;
  const { columns, rows: rowCount } = await survey(path, config.IMPORT_MAX_ROWS);
  if (rowCount > config.IMPORT_MAX_ROWS) {
    throw payloadTooLarge(
      `The file has more than ${config.IMPORT_MAX_ROWS} data rows (the import limit); split it into smaller files`,
    );
  }
  const importId = randomUUID();
  let accepted = 0;
  let duplicates = 0;
  let failed = 0;
  const errors: ImportRowError[] = [];
  const seenKeys = new Set<string>();
  let pending: PendingRow[] = [];

  const fail = (row: number, error: string) => {
    failed++;
    if (errors.length < MAX_LISTED_ERRORS) errors.push({ row, error });
  };

  const flush = async () => {
    const batch = pending;
    const keys = [...new Set(batch.flatMap((row) => row.keys))];
    const claimed = new Set(
      keys.length > 0
        ? (await collections.claims.find({ _id: { $in: keys } })).map((claim) => claim._id)
        : [],
    );
    const receivedAt = new Date().toISOString();
    await Promise.all(
      batch.map(async ({ row, fields, custom, keys: rowKeys, repeatsEarlierRow }) => {
        const submissionId = randomUUID();
        await bus.publish(
          'lead.received',
          {
            submissionId,
            sourceId: CSV_IMPORT_SOURCE.id,
            sourceName: CSV_IMPORT_SOURCE.name,
            receivedAt,
            origin: 'import',
            fields,
            custom,
            attribution: {},
            client: {},
            importId,
            importRow: row - 1,
          },
          { correlationId: submissionId, causationId: by.requestId },
        );
        accepted++;
        if (repeatsEarlierRow || rowKeys.some((key) => claimed.has(key))) duplicates++;
      }),
    );
    pending = [];
    await imports.accepted(importId, accepted);
  };

  await imports.begin(importId, rowCount, timelineActor(by));
  let row = 0;
  try {
    for await (const cells of records(path)) {
      // The header is row 1, as a spreadsheet numbers it.
      if (++row === 1) continue;
      const outcome = mapRow(columns, cells);
      if (outcome.kind === 'blank') continue;
      if (outcome.kind === 'failed') {
        fail(row, outcome.error);
        continue;
      }
      const keys = identityKeysOf(normalizeFields(outcome.fields, config.DEFAULT_PHONE_REGION));
      const repeatsEarlierRow = keys.some((key) => seenKeys.has(key));
      for (const key of keys) seenKeys.add(key);
      pending.push({ row, fields: outcome.fields, custom: outcome.custom, keys, repeatsEarlierRow });
      if (pending.length >= PUBLISH_BATCH) await flush();
    }
    if (pending.length > 0) await flush();
  } catch (error) {
    // The bus or the store failed mid-way: what was handed over is still captured and counted; the
    // rest is recorded as not imported, so the import can finish.
    const notImported = rowCount - accepted - failed;
    const stoppedAt = pending[0]?.row ?? row;
    failed += notImported;
    errors.push({
      row: stoppedAt,
      error: `The upload stopped here: ${notImported} row(s) from this one on were not imported; import them again`,
    });
    await imports.uploaded(importId, { accepted, rejected: failed, errors }).catch(() => undefined);
    throw error;
  }
  const status = await imports.uploaded(importId, { accepted, rejected: failed, errors });
  return {
    importId,
    status,
    rows: rowCount,
    accepted,
    imported: accepted,
    duplicates,
    failed,
    errors,
    statusUrl: `/api/leads/imports/${importId}`,
  };
}
