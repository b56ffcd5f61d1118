import { UnroutableError } from '@lead-capture/bus';
import {
  type ImportStatus,
  type LeadImportProgress,
  type LeadReceived,
  newId,
} from '@lead-capture/contracts';
import { isDuplicateKeyError } from '@lead-capture/docstore';
import { findPage, type Outbox } from '@lead-capture/kit';
import type { LeadContext } from './context.js';
import {
  type ImportDoc,
  type ImportRowDoc,
  type ImportRowError,
  type ImportTally,
  leadCollections,
  type SkippedImportRow,
  type TimelineActor,
  type TrimmedImportRow,
} from './store.js';

/** Row errors listed by an import's status; `failed` counts them all. */
export const MAX_LISTED_ERRORS = 1000;

/** Least time between two lead.import_progress events of one import (from one process). */
const PROGRESS_INTERVAL_MS = 1000;

const OUTCOME_KEY = { created: 'created', duplicate: 'duplicates', failed: 'failed' } as const;

/**
 * An import as GET /api/leads/imports/<id> answers it: its progress, the row errors, the skipped
 * and trimmed rows, when.
 */
export interface ImportStatusView extends LeadImportProgress {
  errors: ImportRowError[];
  /** Blank rows and report lines the upload skipped (0 until the upload is over). */
  skipped: number;
  skippedRows: SkippedImportRow[];
  /** Rows imported without some of their custom columns (0 until the upload is over). */
  trimmed: number;
  trimmedRows: TrimmedImportRow[];
  createdAt: string;
  finishedAt: string | null;
  /** Whether the sequences may enrol the import's leads (its `enrol` parameter). */
  enrol: boolean;
}

/** An import in the list of imports. */
export type ImportSummary = Omit<
  ImportStatusView,
  'errors' | 'skipped' | 'skippedRows' | 'trimmed' | 'trimmedRows'
>;

export type ImportTracker = ReturnType<typeof createImportTracker>;

/**
 * How far each CSV import got. The upload records the rows it refused and how many it handed to the
 * chain; the capture records each accepted row's outcome (created, duplicate, failed) once, in
 * lead_import_rows keyed by import and row, so a redelivered lead.received counts nothing twice; the
 * import is done when every accepted row has its outcome. `settle` recounts from those rows, so a
 * crash between a row's outcome and the import's running tally costs nothing but a late finish.
 */
export function createImportTracker({ collections, bus, now: clock }: LeadContext, outbox: Outbox) {
  const { imports, importRows } = collections;
  const lastProgressAt = new Map<string, number>();

  async function recount(importId: string): Promise<ImportTally> {
    const [created, duplicates, failed] = await Promise.all(
      (['created', 'duplicate', 'failed'] as const).map((outcome) =>
        importRows.countDocuments({ importId, outcome }),
      ),
    );
    return { created: created!, duplicates: duplicates!, failed: failed! };
  }

  async function captureErrors(importId: string): Promise<ImportRowError[]> {
    const failed = await importRows.find(
      { importId, outcome: 'failed' },
      { sort: { row: 1 }, limit: MAX_LISTED_ERRORS },
    );
    return failed.map(({ row, error }) => ({ row, error: error ?? 'Capture failed' }));
  }

  /**
   * Only live views receive it (broadcast); with none listening nobody is owed a copy. A notification
   * with no state of its own to commit with, so a direct publish rather than an outbox change.
   */
  async function announce(doc: ImportDoc, tally: ImportTally, status: ImportStatus, id?: string) {
    const progress: LeadImportProgress = {
      importId: doc._id,
      status,
      rows: doc.rows,
      accepted: doc.accepted,
      created: tally.created,
      duplicates: tally.duplicates,
      failed: doc.rejected + tally.failed,
    };
    try {
      await bus.publish('lead.import_progress', progress, id ? { id } : {});
    } catch (error) {
      if (!(error instanceof UnroutableError)) throw error;
    }
  }

  /**
   * Marks the import done once every accepted row has an outcome (counted from the rows), after
   * announcing it under the import's fixed event id. Idempotent; a no-op while rows are missing.
   */
  async function settle(importId: string): Promise<ImportDoc | null> {
    const doc = await imports.findOne({ _id: importId });
    if (doc?.status !== 'in_progress' || !doc.uploaded) return doc;
    const tally = await recount(importId);
    if (tally.created + tally.duplicates + tally.failed < doc.accepted) return doc;
    await announce(doc, tally, 'done', doc.doneEventId);
    const errors = [...doc.errors, ...(await captureErrors(importId))]
      .sort((a, b) => a.row - b.row)
      .slice(0, MAX_LISTED_ERRORS);
    const done = await imports.findOneAndUpdate(
      { _id: importId, status: 'in_progress' },
      { $set: { status: 'done', tally, errors, finishedAt: clock().toISOString() } },
    );
    lastProgressAt.delete(importId);
    return done ?? imports.findOne({ _id: importId });
  }

  return {
    /** The import, before its first row is handed to the chain. */
    async begin(importId: string, rows: number, actor: TimelineActor | null, enrol = true): Promise<void> {
      await imports.insertOne({
        _id: importId,
        actor,
        enrol,
        createdAt: clock().toISOString(),
        rows,
        accepted: 0,
        rejected: 0,
        errors: [],
        uploaded: false,
        status: 'in_progress',
        tally: { created: 0, duplicates: 0, failed: 0 },
        doneEventId: newId(),
        finishedAt: null,
      });
    },

    /**
     * Hands rows to the capture chain: their lead.received events and the import's count of rows
     * handed over (`accepted`, the total so far) in one outbox change, so the count never misses an
     * event or counts one that was not recorded. Each row's submission is its own stream.
     */
    async handOver(
      importId: string,
      rows: readonly LeadReceived[],
      accepted: number,
      causationId: string | undefined,
    ): Promise<void> {
      await outbox.change(async (change) => {
        for (const received of rows) {
          await change.emit(received.submissionId, 'lead.received', received, {
            correlationId: received.submissionId,
            causationId,
          });
        }
        await leadCollections(change).imports.updateOne({ _id: importId }, { $set: { accepted } });
      });
    },

    /** Every row is handed over or refused; done at once if the capture already processed them all. */
    async uploaded(
      importId: string,
      result: {
        accepted: number;
        rejected: number;
        errors: ImportRowError[];
        skipped: number;
        skippedRows: SkippedImportRow[];
        trimmed: number;
        trimmedRows: TrimmedImportRow[];
      },
    ): Promise<ImportStatus> {
      await imports.updateOne({ _id: importId }, { $set: { ...result, uploaded: true } });
      return (await settle(importId))?.status ?? 'in_progress';
    },

    /**
     * Counts one accepted row's outcome, once: a row counted before (a redelivery) only finishes
     * what that attempt may have left undone.
     */
    async recordOutcome(
      importId: string,
      importRow: number,
      outcome: ImportRowDoc['outcome'],
      details: { leadId?: string; error?: string } = {},
    ): Promise<void> {
      const rowId = `${importId}:${importRow}`;
      try {
        await importRows.insertOne({
          _id: rowId,
          importId,
          // importRow is the 1-based data row; the header is spreadsheet row 1.
          row: importRow + 1,
          outcome,
          leadId: details.leadId ?? null,
          error: details.error ?? null,
          at: clock(),
        });
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        await settle(importId);
        return;
      }
      const doc = await imports.findOneAndUpdate(
        { _id: importId, status: 'in_progress' },
        { $inc: { [`tally.${OUTCOME_KEY[outcome]}`]: 1 } },
      );
      if (!doc) {
        // Finished long ago (its rows expired since) or unknown: this outcome changes no count.
        await importRows.deleteOne({ _id: rowId });
        return;
      }
      const { created, duplicates, failed } = doc.tally;
      if (doc.uploaded && created + duplicates + failed >= doc.accepted) {
        await settle(importId);
        return;
      }
      const now = clock().getTime();
      if (now - (lastProgressAt.get(importId) ?? 0) < PROGRESS_INTERVAL_MS) return;
      lastProgressAt.set(importId, now);
      await announce(doc, doc.tally, 'in_progress');
    },

    /**
     * The import as a client sees it, or null when unknown. In progress, the counts are the rows'
     * (exact even after a crash), and an import found complete is settled on the way.
     */
    async status(importId: string, options: { errors: boolean } = { errors: true }) {
      let doc = await imports.findOne({ _id: importId });
      if (!doc) return null;
      if (doc.status === 'in_progress') {
        try {
          doc = (await settle(importId)) ?? doc;
        } catch {
          // The bus could not take the announcement: the capture's next settle finishes it.
        }
      }
      return viewOf(doc, options.errors);
    },

    /** Newest first, without the errors (GET one import for them). */
    async list(page: number, limit: number): Promise<{ data: ImportSummary[]; total: number }> {
      const { found, total } = await findPage(imports, {}, { createdAt: -1, _id: -1 }, { page, limit });
      const views = await Promise.all(found.map((doc) => viewOf(doc, false)));
      return {
        data: views.map(
          ({
            errors: _errors,
            skipped: _skipped,
            skippedRows: _skippedRows,
            trimmed: _trimmed,
            trimmedRows: _trimmedRows,
            ...summary
          }) => summary,
        ),
        total,
      };
    },
  };

  async function viewOf(stored: ImportDoc, withErrors: boolean): Promise<ImportStatusView> {
    const done = stored.status === 'done';
    const tally = done ? stored.tally : await recount(stored._id);
    let errors = stored.errors;
    if (withErrors && !done) {
      errors = [...errors, ...(await captureErrors(stored._id))]
        .sort((a, b) => a.row - b.row)
        .slice(0, MAX_LISTED_ERRORS);
    }
    return {
      importId: stored._id,
      status: stored.status,
      rows: stored.rows,
      accepted: stored.accepted,
      created: tally.created,
      duplicates: tally.duplicates,
      failed: stored.rejected + tally.failed,
      errors: withErrors ? errors : [],
      skipped: stored.skipped ?? 0,
      skippedRows: stored.skippedRows ?? [],
      trimmed: stored.trimmed ?? 0,
      trimmedRows: stored.trimmedRows ?? [],
      createdAt: stored.createdAt,
      finishedAt: stored.finishedAt,
      enrol: stored.enrol ?? true,
    };
  }
}
