import {
  CSV_IMPORT_SOURCE,
  type JsonObject,
  type LeadField,
  type LeadReceived,
  newId,
} from '@lead-capture/contracts';
import { badRequest, payloadTooLarge } from '@lead-capture/kit';
import type { LeadContext } from '../context.js';
import { type ImportTracker, MAX_LISTED_ERRORS } from '../imports.js';
import { type Requester, timelineActor } from '../lead-actions.js';
import { identityKeysOf, normalizeFields } from '../normalize.js';
import type { ImportRowError, SkippedImportRow, TrimmedImportRow } from '../store.js';
import {
  type Column,
  type ColumnMapping,
  type ColumnView,
  HEADER_SEARCH_ROWS,
  mapHeader,
  mapRow,
  namesAColumn,
  type RowOutcome,
  skippedRow,
  viewOfColumns,
} from './columns.js';
import { type CsvDialect, type DialectChoice, detectDialect, readRecords } from './dialect.js';

const PUBLISH_BATCH = 200;

/** Rows a dry run shows as they would be imported. */
export const PREVIEW_ROWS = 20;

/** How to read the file; anything not given is detected. */
export interface ImportOptions {
  mapping?: ColumnMapping;
  dialect?: DialectChoice;
  /** false: the imported leads are enrolled in no sequence (their lead.received says so). */
  enrol?: boolean;
}

/** A row that is neither a lead nor an error: a blank separator or a report's footer line. */
export type SkippedRow = SkippedImportRow;

/** A row imported without some of its custom columns, and which. */
export type TrimmedRow = TrimmedImportRow;

/** What the reading of the file found, in both answers. */
interface FileReport {
  dialect: CsvDialect;
  columns: ColumnView[];
  /** Blank rows and report lines (totals, confidentiality, copyright) not imported. */
  skipped: number;
  skippedRows: SkippedRow[];
  /** Rows imported without some of their custom columns (over 100 custom fields or 32 KiB of them). */
  trimmed: number;
  /** The first MAX_LISTED_ERRORS of them, with what was left out. */
  trimmedRows: TrimmedRow[];
}

/** The answer to the upload: what happened to each row so far; the leads follow as the chain runs. */
export interface ImportResult extends FileReport {
  importId: string;
  /** `done` only when no row was handed to the chain (or the chain already processed them all). */
  status: 'in_progress' | 'done';
  /** Data rows of the file, blank and report rows aside. */
  rows: number;
  /** Rows handed to the capture chain. */
  accepted: number;
  /** The same number as `accepted`, under its first name. */
  imported: number;
  /** Accepted rows that repeat an existing lead or an earlier row, as seen at upload. */
  duplicates: number;
  /** Rows refused at upload. */
  failed: number;
  errors: ImportRowError[];
  /** Where to follow the capture of the rows. */
  statusUrl: string;
}

/** A row as it would be imported. */
export interface PreviewRow {
  row: number;
  fields: Partial<Record<LeadField, string>>;
  custom: JsonObject;
}

/** The answer to a dry run: what an import of the file would do, with nothing imported. */
export interface DryRunResult extends FileReport {
  dryRun: true;
  rows: number;
  /** Rows an import would hand to the capture chain. */
  accepted: number;
  duplicates: number;
  failed: number;
  errors: ImportRowError[];
  /** The first rows as they would be imported (standard fields after the full-name split). */
  preview: PreviewRow[];
}

interface PreparedFile {
  dialect: CsvDialect;
  columns: Column[];
  /** The header's spreadsheet row number: 1, or below the title and blank rows above it. */
  headerRow: number;
  /** Data rows, blank and report rows aside. */
  rows: number;
}

/** One data row of the file with its spreadsheet row number (the first row of the file is row 1). */
async function* dataRows(
  path: string,
  prepared: Pick<PreparedFile, 'dialect' | 'columns' | 'headerRow'>,
): AsyncGenerator<{ row: number; outcome: RowOutcome; cells: string[] }> {
  let row = 0;
  for await (const cells of readRecords(path, prepared.dialect)) {
    if (++row <= prepared.headerRow) continue;
    yield { row, outcome: mapRow(prepared.columns, cells), cells };
  }
}

/** A failed row's cells as the user would recognise the line (capped: it is shown, not re-imported). */
export function rowValue(cells: string[]): string {
  const last = cells.findLastIndex((cell) => cell.trim() !== '');
  const line = cells.slice(0, last + 1).join(', ');
  return line.length > MAX_ROW_VALUE ? `${line.slice(0, MAX_ROW_VALUE - 1)}…` : line;
}
const MAX_ROW_VALUE = 200;

/**
 * The first pass: the dialect, the header's columns and the number of data rows, stopping as soon
 * as there are more than `limit` (413). Nothing is written before it succeeds.
 */
async function prepare(path: string, options: ImportOptions, limit: number): Promise<PreparedFile> {
  const dialect = await detectDialect(path, options.dialect);
  let columns: Column[] | null = null;
  let headerRow = 0;
  let firstFilled: { cells: string[]; row: number } | undefined;
  let looked = 0;
  let rows = 0;
  for await (const cells of readRecords(path, dialect)) {
    if (!columns) {
      headerRow++;
      // The header is the first row that names a column; blank and title rows above it are passed over.
      if (skippedRow(cells)?.kind === 'blank') continue;
      firstFilled ??= { cells, row: headerRow };
      if (namesAColumn(cells, options.mapping)) {
        columns = mapHeader(cells, options.mapping);
      } else if (++looked >= HEADER_SEARCH_ROWS) {
        // None of the first rows is a header: the first one is refused with the reason (mapHeader).
        columns = mapHeader(firstFilled.cells, options.mapping);
      }
      continue;
    }
    if (skippedRow(cells)) continue;
    if (++rows > limit) {
      throw payloadTooLarge(
        `The file has more than ${limit} data rows (the import limit); split it into smaller files`,
      );
    }
  }
  if (!columns) {
    if (!firstFilled) throw badRequest('The file is empty; expected a header row and data rows');
    columns = mapHeader(firstFilled.cells, options.mapping);
  }
  return { dialect, columns, headerRow, rows };
}

/**
 * Collects the rows the answer lists beside the leads: blank and report rows (skipped) and rows
 * imported without some custom columns (trimmed), counting all and listing the first
 * MAX_LISTED_ERRORS of each.
 */
function rowNotesCollector() {
  const report = {
    skipped: 0,
    skippedRows: [] as SkippedRow[],
    trimmed: 0,
    trimmedRows: [] as TrimmedRow[],
  };
  return {
    report,
    skip(row: number, outcome: { kind: 'blank' } | { kind: 'report'; line: string }) {
      report.skipped++;
      if (report.skippedRows.length >= MAX_LISTED_ERRORS) return;
      report.skippedRows.push({
        row,
        reason: outcome.kind === 'blank' ? 'blank row' : `report line: ${outcome.line.slice(0, 100)}`,
      });
    },
    trim(row: number, reason: string | undefined) {
      if (reason === undefined) return;
      report.trimmed++;
      if (report.trimmedRows.length < MAX_LISTED_ERRORS) report.trimmedRows.push({ row, reason });
    },
  };
}

interface PendingRow {
  row: number;
  fields: Partial<Record<LeadField, string>>;
  custom: JsonObject;
  keys: string[];
  /** A row above in the same file shares an e-mail or phone with it. */
  repeatsEarlierRow: boolean;
  /** What of its custom data was left out (reported once the row is handed over). */
  trimmed?: string | undefined;
}

/** Tells the rows of one file that repeat an existing lead or a row above, as the upload sees them. */
function duplicateFinder(context: LeadContext) {
  const seenKeys = new Set<string>();
  return {
    pending(row: number, fields: Partial<Record<LeadField, string>>, custom: JsonObject): PendingRow {
      const keys = identityKeysOf(normalizeFields(fields, context.config.DEFAULT_PHONE_REGION));
      const repeatsEarlierRow = keys.some((key) => seenKeys.has(key));
      for (const key of keys) seenKeys.add(key);
      return { row, fields, custom, keys, repeatsEarlierRow };
    },
    /** The keys of the batch already claimed by a lead. */
    async claimed(batch: PendingRow[]): Promise<Set<string>> {
      const keys = [...new Set(batch.flatMap((row) => row.keys))];
      if (keys.length === 0) return new Set();
      const claims = await context.collections.claims.find({ _id: { $in: keys } });
      return new Set(claims.map((claim) => claim._id));
    },
  };
}

function isDuplicate(row: PendingRow, claimed: Set<string>): boolean {
  return row.repeatsEarlierRow || row.keys.some((key) => claimed.has(key));
}

/**
 * Reads a CSV file already on disk as an import would, and imports nothing: the dialect, the
 * mapping, the counts an import would answer (duplicates as the upload sees them now) and the first
 * PREVIEW_ROWS rows as they would be imported. Over IMPORT_MAX_ROWS it is refused (413) as an import is.
 */
export async function previewCsvFile(
  context: LeadContext,
  path: string,
  options: ImportOptions = {},
): Promise<DryRunResult> {
  const prepared = await prepare(path, options, context.config.IMPORT_MAX_ROWS);
  const finder = duplicateFinder(context);
  const notes = rowNotesCollector();
  const errors: ImportRowError[] = [];
  const preview: PreviewRow[] = [];
  let accepted = 0;
  let failed = 0;
  let duplicates = 0;
  let pending: PendingRow[] = [];
  const flush = async () => {
    const claimed = await finder.claimed(pending);
    duplicates += pending.filter((row) => isDuplicate(row, claimed)).length;
    pending = [];
  };
  for await (const { row, outcome, cells } of dataRows(path, prepared)) {
    if (outcome.kind === 'blank' || outcome.kind === 'report') {
      notes.skip(row, outcome);
      continue;
    }
    if (outcome.kind === 'failed') {
      failed++;
      if (errors.length < MAX_LISTED_ERRORS)
        errors.push({ row, error: outcome.error, value: rowValue(cells) });
      continue;
    }
    accepted++;
    notes.trim(row, outcome.trimmed);
    if (preview.length < PREVIEW_ROWS) preview.push({ row, fields: outcome.fields, custom: outcome.custom });
    pending.push(finder.pending(row, outcome.fields, outcome.custom));
    if (pending.length >= PUBLISH_BATCH) await flush();
  }
  if (pending.length > 0) await flush();
  return {
    dryRun: true,
    dialect: prepared.dialect,
    columns: viewOfColumns(prepared.columns),
    rows: prepared.rows,
    accepted,
    duplicates,
    failed,
    errors,
    ...notes.report,
    preview,
  };
}

/**
 * Imports a CSV file already on disk: refuses it whole (413) when it has more than IMPORT_MAX_ROWS
 * data rows, before anything is written; otherwise every valid row enters the capture chain as a
 * lead.received of origin 'import', exactly like a webhook submission, and the import is recorded
 * so its capture can be followed (imports.ts). Blank rows and report lines are skipped and listed.
 * `duplicates` is what the upload can see: rows that share an e-mail or phone with an existing lead
 * or a row above; the status counts what the capture actually flagged.
 */
export async function importCsvFile(
  context: LeadContext,
  imports: ImportTracker,
  path: string,
  by: Requester,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const { config } = context;
  const prepared = await prepare(path, options, config.IMPORT_MAX_ROWS);
  const rowCount = prepared.rows;
  const importId = newId();
  const finder = duplicateFinder(context);
  const notes = rowNotesCollector();
  let accepted = 0;
  let duplicates = 0;
  let failed = 0;
  const errors: ImportRowError[] = [];
  let pending: PendingRow[] = [];

  const fail = (row: number, error: string, cells: string[]) => {
    failed++;
    if (errors.length < MAX_LISTED_ERRORS) errors.push({ row, error, value: rowValue(cells) });
  };

  const flush = async () => {
    const batch = pending;
    const claimed = await finder.claimed(batch);
    const receivedAt = context.now().toISOString();
    const received = batch.map(
      (pendingRow): LeadReceived => ({
        submissionId: newId(),
        sourceId: CSV_IMPORT_SOURCE.id,
        sourceName: CSV_IMPORT_SOURCE.name,
        receivedAt,
        origin: 'import',
        fields: pendingRow.fields,
        custom: pendingRow.custom,
        attribution: {},
        client: {},
        importId,
        importRow: pendingRow.row - 1,
        ...(options.enrol === false ? { enrol: false } : {}),
      }),
    );
    await imports.handOver(importId, received, accepted + batch.length, by.requestId);
    accepted += batch.length;
    for (const pendingRow of batch) notes.trim(pendingRow.row, pendingRow.trimmed);
    duplicates += batch.filter((pendingRow) => isDuplicate(pendingRow, claimed)).length;
    pending = [];
  };

  await imports.begin(importId, rowCount, timelineActor(by), options.enrol ?? true);
  let row = 0;
  try {
    for await (const next of dataRows(path, prepared)) {
      row = next.row;
      const { outcome } = next;
      if (outcome.kind === 'blank' || outcome.kind === 'report') {
        notes.skip(row, outcome);
        continue;
      }
      if (outcome.kind === 'failed') {
        fail(row, outcome.error, next.cells);
        continue;
      }
      pending.push({ ...finder.pending(row, outcome.fields, outcome.custom), trimmed: outcome.trimmed });
      if (pending.length >= PUBLISH_BATCH) await flush();
    }
    if (pending.length > 0) await flush();
  } catch (error) {
    // The store failed mid-way (a batch is handed over whole or not at all): what was handed over is
    // still captured and counted; the rest is recorded as not imported, so the import can finish.
    const notImported = rowCount - accepted - failed;
    const stoppedAt = pending[0]?.row ?? row;
    failed += notImported;
    errors.push({
      row: stoppedAt,
      error: `The upload stopped here: ${notImported} row(s) from this one on were not imported; import them again`,
    });
    await imports
      .uploaded(importId, { accepted, rejected: failed, errors, ...notes.report })
      .catch(() => undefined);
    throw error;
  }
  const status = await imports.uploaded(importId, { accepted, rejected: failed, errors, ...notes.report });
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
    dialect: prepared.dialect,
    columns: viewOfColumns(prepared.columns),
    ...notes.report,
  };
}
