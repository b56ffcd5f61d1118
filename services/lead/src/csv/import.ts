import { randomUUID } from 'node:crypto';
import { CSV_IMPORT_SOURCE, type JsonObject, LEAD_FIELDS, type LeadField } from '@lead-capture/contracts';
import { badRequest, payloadTooLarge } from '@lead-capture/kit';
import { parseFile } from 'fast-csv';
import type { LeadContext } from '../context.js';
import { type Requester, timelineActor } from '../lead-actions.js';
import { identityKeysOf, normalizeFields } from '../normalize.js';

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

/** Keys that would be unsafe as custom metadata keys in a plain object. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Errors listed in the response; the `failed` count covers every failed row. */
const MAX_LISTED_ERRORS = 1000;

const PUBLISH_BATCH = 200;

/** A practical e-mail check: something@domain.tld, no spaces, at most 254 characters. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@.]+$/;

export interface ImportResult {
  importId: string;
  imported: number;
  duplicates: number;
  failed: number;
  errors: { row: number; error: string }[];
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
    if (FORBIDDEN_KEYS.has(header)) throw badRequest(`Column header not allowed: ${header}`);
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

/** One data row: its standard fields and custom metadata, or why it cannot be imported. */
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
  if (fields.email !== undefined && (fields.email.length > 254 || !EMAIL.test(fields.email))) {
    return { kind: 'failed', error: `Invalid email: ${fields.email.slice(0, 100)}` };
  }
  return { kind: 'lead', fields, custom: Object.fromEntries(custom) };
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
 * lead.received of origin 'import', exactly like a webhook submission. Duplicates are counted by
 * the capture's rule, against existing leads and the rows above in the same file.
 */
export async function importCsvFile(
  context: LeadContext,
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
  const result: ImportResult = { importId, imported: 0, duplicates: 0, failed: 0, errors: [] };
  const seenKeys = new Set<string>();
  let pending: PendingRow[] = [];

  const fail = (row: number, error: string) => {
    result.failed++;
    if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push({ row, error });
  };

  const flush = async () => {
    const batch = pending;
    pending = [];
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
        result.imported++;
        if (repeatsEarlierRow || rowKeys.some((key) => claimed.has(key))) result.duplicates++;
      }),
    );
  };

  await collections.imports.insertOne({
    _id: importId,
    actor: timelineActor(by),
    createdAt: new Date().toISOString(),
    rows: rowCount,
    imported: 0,
    duplicates: 0,
    failed: 0,
  });
  let row = 0;
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
  await collections.imports.updateOne(
    { _id: importId },
    { $set: { imported: result.imported, duplicates: result.duplicates, failed: result.failed } },
  );
  return result;
}
