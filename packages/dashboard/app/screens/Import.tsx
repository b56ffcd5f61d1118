import { useEffect, useState } from 'preact/hooks';
import {
  api,
  authorizedFetch,
  type ImportDryRun,
  type ImportReport,
  type ImportStarted,
  inPath,
  unwrap,
} from '../api/client.js';
import { useStream } from '../api/stream.js';
import { Form } from '../components/forms.js';
import { TitledSection } from '../components/sections.js';
import { ActionButton, ErrorMessage, formatDate, useAction, useLoad } from '../components/ui.js';

/** While the stream is down, the import's status is asked this often instead. */
const POLL_INTERVAL_MS = 2000;

interface Progress {
  importId: string;
  status: 'in_progress' | 'done';
  rows: number;
  accepted: number;
  created: number;
  duplicates: number;
  failed: number;
}

const processedOf = (progress: Progress) => progress.created + progress.duplicates + progress.failed;

/**
 * The progress to show: the stream's events and the polled status may arrive in any order, so a
 * report never replaces a later one. Done is final (the most complete done report wins); before that,
 * counts only grow.
 */
function advance(current: Progress | undefined, next: Progress): Progress {
  if (!current || current.importId !== next.importId) return next;
  if (current.status === 'done' && next.status !== 'done') return current;
  if (next.status === 'done' && current.status !== 'done') return next;
  return processedOf(next) >= processedOf(current) ? next : current;
}

/**
 * What a column may be imported as: the `mapping` parameter's values, i.e. what a dry run says a column
 * maps to (its OpenAPI enum, so a new one fails the typecheck here until it has a label) with `ignore`
 * for `ignored`.
 */
type ColumnTarget = Exclude<ImportDryRun['columns'][number]['mapsTo'], 'ignored'> | 'ignore';
const TARGET_LABELS: Record<ColumnTarget, string> = {
  email: 'E-mail',
  firstName: 'First name',
  lastName: 'Last name',
  phone: 'Phone',
  company: 'Company',
  fullName: 'Full name (split into first and last)',
  custom: 'Custom field',
  ignore: 'Do not import',
};
const COLUMN_TARGETS = Object.keys(TARGET_LABELS) as ColumnTarget[];

type DryRun = ImportDryRun;

/**
 * The header row's cells as the browser reads them, for mapping a file the API could not read the
 * columns of (it names none it recognises, or two of one kind): the first non-blank line of the
 * file's start, split on the commonest of comma, semicolon and tab outside quotes.
 */
async function headerCells(file: File): Promise<string[]> {
  const text = (await file.slice(0, 65536).text()).replace(/^\uFEFF/, '');
  const line = text.split(/\r?\n/).find((candidate) => candidate.trim() !== '') ?? '';
  const outsideQuotes = line.replace(/"[^"]*"/g, '');
  const delimiter = [',', ';', '\t'].reduce((best, candidate) =>
    outsideQuotes.split(candidate).length > outsideQuotes.split(best).length ? candidate : best,
  );
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let index = 0; index < line.length; index++) {
    const char = line[index];
    if (quoted) {
      if (char === '"' && line[index + 1] === '"') {
        cell += '"';
        index++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === delimiter) {
      cells.push(cell.trim());
      cell = '';
    } else cell += char;
  }
  cells.push(cell.trim());
  return cells.filter((header) => header !== '');
}

/** "1 row", "5 rows". */
function rowCount(count: number): string {
  return `${count} ${count === 1 ? 'row' : 'rows'}`;
}

/** A row the import refused or could not capture: its spreadsheet number, its cells, why. */
type FailedRow = ImportReport['errors'][number];

/** A row imported without some of its custom columns (over 100 custom fields or 32 KiB of them), and which. */
type TrimmedRow = ImportReport['trimmedRows'][number];

/**
 * Rows of an import (or of a dry run) by spreadsheet row number, with what is said of each: the
 * failed ones with the row as in the file, the trimmed ones with the columns left out.
 */
function RowReport({
  rows,
  caption,
  kind,
}:
  | { rows: FailedRow[]; caption: string; kind: 'failed' }
  | { rows: TrimmedRow[]; caption: string; kind: 'trimmed' }) {
  const failed = kind === 'failed';
  const why = failed ? 'Why' : 'Left out';
  return (
    <div class="table-wrap">
      <table class={`card-table ${kind}-rows`}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Row</th>
            {failed && <th scope="col">In the file</th>}
            <th scope="col">{why}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const reason = 'error' in row ? row.error : row.reason;
            return (
              <tr key={`${row.row}-${reason}`}>
                <td data-label="Row" class="number">
                  {row.row}
                </td>
                {'error' in row && (
                  <td data-label="In the file" class="mono">
                    {row.value ?? '—'}
                  </td>
                )}
                <td data-label={why}>{reason}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The upload: a dry run, or the import with the user's sequence choice (always sent: never a default). */
async function upload(file: File, mapping: Record<string, ColumnTarget>, dryRun: boolean, enrol = false) {
  const body = new FormData();
  if (dryRun) body.append('dryRun', 'true');
  else body.append('enrol', String(enrol));
  if (Object.keys(mapping).length > 0) body.append('mapping', JSON.stringify(mapping));
  body.append('file', file, file.name);
  const response = await authorizedFetch(new Request('/api/leads/import', { method: 'POST', body }));
  const answer = (await response.json().catch(() => ({}))) as { error?: string };
  return { ok: response.ok, status: response.status, answer };
}

export function Import() {
  const [file, setFile] = useState<File | undefined>(undefined);
  // A new file input once a file is imported: choosing the same file again is a change.
  const [fileInput, setFileInput] = useState(0);
  // What each column is imported as, where the user chose (the others: as the API recognises them).
  const [mapping, setMapping] = useState<Record<string, ColumnTarget>>({});
  const [check, setCheck] = useState<{ dryRun?: DryRun; error?: string; headers: string[] }>();
  const [progress, setProgress] = useState<Progress | undefined>(undefined);
  const [report, setReport] = useState<ImportReport | undefined>(undefined);
  // Off until the user asks: an old list imported is rarely people to e-mail automatically today.
  const [enrol, setEnrol] = useState(false);
  const [enrolled, setEnrolled] = useState(false);
  // A past import's failed rows, opened from the list of recent imports.
  const [opened, setOpened] = useState<ImportReport | undefined>(undefined);
  const opening = useAction();
  const checking = useAction();
  const importing = useAction();
  const history = useLoad(
    async () => unwrap(await api.GET('/api/leads/imports', { params: { query: { limit: 10 } } })),
    [],
  );

  const importId = progress?.importId;
  const done = progress?.status === 'done';

  useStream((message) => {
    if (message.type !== 'lead.import_progress' || message.data.importId !== importId) return;
    setProgress((current) => advance(current, message.data as unknown as Progress));
  });

  // The per-row report (and a fallback for progress) from GET /api/leads/imports/<id>.
  useEffect(() => {
    if (!importId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      const result = await api.GET('/api/leads/imports/{importId}', inPath({ importId }));
      if (stopped) return;
      if (result.data) {
        setReport(result.data);
        const polled = result.data;
        setProgress((current) => advance(current, polled));
        if (result.data.status === 'done') {
          void history.reload();
          return;
        }
      }
      timer = setTimeout(poll, POLL_INTERVAL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [importId, done]);

  // Step 1: a dry run of the chosen file with the chosen mapping: its columns, counts and problems.
  useEffect(() => {
    if (!file) return setCheck(undefined);
    let current = true;
    void checking.run(async () => {
      const { ok, answer } = await upload(file, mapping, true);
      if (!current) return;
      if (ok) return setCheck({ dryRun: answer as DryRun, headers: [] });
      // Columns the API could not read: the header row as the browser reads it, to map by hand.
      setCheck({ error: answer.error ?? 'The file cannot be imported', headers: await headerCells(file) });
    });
    return () => {
      current = false;
    };
  }, [file, JSON.stringify(mapping)]);

  const columns: Array<{ header: string; target: ColumnTarget; mapped: boolean }> = check?.dryRun
    ? check.dryRun.columns.map((column) => ({
        header: column.header,
        target: mapping[column.header] ?? (column.mapsTo === 'ignored' ? 'ignore' : column.mapsTo),
        mapped: column.mapped,
      }))
    : (check?.headers ?? []).map((header) => ({
        header,
        target: mapping[header] ?? 'custom',
        mapped: header in mapping,
      }));
  const processed = progress ? processedOf(progress) : 0;

  return (
    <TitledSection id="import-title" title="Import leads from CSV">
      <p class="muted">
        A header row, then one lead per row. Columns are recognised by their names (e-mail, first and last
        name, full name, phone, company, as HubSpot, Salesforce, Pipedrive and others name them); check what
        each column is imported as, change it where needed, then import.
      </p>
      <Form
        class="inline"
        onSubmit={() => {
          if (!file || !check?.dryRun) return;
          void importing.run(async () => {
            setProgress(undefined);
            setReport(undefined);
            const { ok, status, answer } = await upload(file, mapping, false, enrol);
            setEnrolled(enrol);
            if (!ok) throw new Error(answer.error ?? `Import failed (${status})`);
            const started = answer as ImportStarted;
            // Rows refused at upload are done with; the created and duplicate leads follow from the
            // capture (the answer's `duplicates` are a forecast, not outcomes).
            setProgress((current) =>
              advance(current, {
                importId: started.importId,
                status: 'in_progress',
                rows: started.rows,
                accepted: started.accepted,
                created: 0,
                duplicates: 0,
                failed: started.failed,
              }),
            );
            setFile(undefined);
            setFileInput((count) => count + 1);
            setMapping({});
          });
        }}
      >
        <label>
          CSV file
          <input
            type="file"
            key={fileInput}
            name="file"
            accept=".csv,text/csv"
            onChange={(event) => {
              setMapping({});
              setFile(event.currentTarget.files?.[0]);
            }}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            name="enrol"
            aria-describedby="import-enrol-help"
            checked={enrol}
            onChange={(event) => setEnrol(event.currentTarget.checked)}
          />
          Enrol the imported leads in the sequences they match
        </label>
        <button
          type="submit"
          class="primary"
          disabled={
            !file || !check?.dryRun || check.dryRun.accepted === 0 || importing.pending || checking.pending
          }
        >
          {importing.pending
            ? 'Uploading…'
            : check?.dryRun
              ? `Import ${check.dryRun.accepted} row${check.dryRun.accepted === 1 ? '' : 's'}`
              : 'Import'}
        </button>
      </Form>
      <p class="muted" id="import-enrol-help">
        Unchecked, the leads are scored and assigned as usual but no sequence e-mails them; checked, each one
        starts every active sequence it matches, as a lead from a form does.
      </p>
      <ErrorMessage error={importing.error ?? checking.error} />
      {file && check && (
        <TitledSection
          id="import-columns-title"
          level={2}
          class="import-columns"
          title={<>Columns of {file.name}</>}
        >
          {check.error && (
            <>
              <ErrorMessage error={check.error} />
              {columns.length > 0 && <p>Choose below what each column holds; the file is checked again.</p>}
            </>
          )}
          {check.dryRun && (
            <p role="status">
              {rowCount(check.dryRun.rows)}: {check.dryRun.accepted} would be imported (
              {check.dryRun.duplicates} of them duplicates), {check.dryRun.failed} would fail
              {check.dryRun.trimmed > 0 &&
                `; ${check.dryRun.trimmed} would be imported without some custom columns`}
              .
            </p>
          )}
          <table class="mappings">
            <thead>
              <tr>
                <th scope="col">Column</th>
                <th scope="col">Imported as</th>
              </tr>
            </thead>
            <tbody>
              {columns.map((column, index) => (
                <tr key={`${index}-${column.header}`}>
                  <td>{column.header}</td>
                  <td>
                    <select
                      aria-label={`Column ${column.header} is imported as`}
                      value={column.target}
                      disabled={checking.pending}
                      onChange={(event) =>
                        setMapping({ ...mapping, [column.header]: event.currentTarget.value as ColumnTarget })
                      }
                    >
                      {COLUMN_TARGETS.map((target) => (
                        <option key={target} value={target}>
                          {TARGET_LABELS[target]}
                        </option>
                      ))}
                    </select>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {check.dryRun && check.dryRun.errors.length > 0 && (
            <RowReport kind="failed" rows={check.dryRun.errors} caption="Rows that would fail" />
          )}
          {check.dryRun && check.dryRun.trimmedRows.length > 0 && (
            <RowReport
              kind="trimmed"
              rows={check.dryRun.trimmedRows}
              caption="Rows that would be imported without some custom columns"
            />
          )}
        </TitledSection>
      )}
      {progress && (
        <TitledSection
          id="import-progress-title"
          level={2}
          class="import-progress"
          title={done ? 'Import finished' : 'Importing…'}
        >
          <progress
            aria-labelledby="import-progress-title"
            max={Math.max(progress.rows, 1)}
            value={done ? Math.max(progress.rows, 1) : processed}
            data-status={progress.status}
          />
          <p role="status">
            {processed} of {rowCount(progress.rows)} processed: {progress.created} created,{' '}
            {progress.duplicates} duplicates, {progress.failed} failed.
          </p>
          <p data-testid="import-enrolment">
            {(report?.enrol ?? enrolled)
              ? 'The new leads are enrolled in the sequences they match.'
              : 'The new leads are enrolled in no sequence.'}
          </p>
          {report && report.errors.length > 0 && (
            <RowReport kind="failed" rows={report.errors} caption="Rows that were not imported" />
          )}
          {report && report.trimmedRows.length > 0 && (
            <RowReport
              kind="trimmed"
              rows={report.trimmedRows}
              caption="Rows imported without some custom columns"
            />
          )}
        </TitledSection>
      )}
      <TitledSection id="import-history-title" level={2} title="Recent imports">
        <ErrorMessage error={history.error ?? opening.error} />
        {history.data?.data.length === 0 && (
          <p class="empty-state" data-empty="imports">
            No import yet. Choose a CSV file above: the first row names the columns (e-mail, first name,
            company…), and you check how each column is read before anything is imported.
          </p>
        )}
        <ul>
          {(history.data?.data ?? []).map((entry) => (
            <li key={entry.importId}>
              {formatDate(entry.createdAt)} — {entry.status === 'done' ? 'done' : 'in progress'}:{' '}
              {rowCount(entry.rows)}, {entry.created} created, {entry.duplicates} duplicates, {entry.failed}{' '}
              failed
              {entry.enrol ? '' : '; enrolled in no sequence'}
              {entry.failed > 0 && entry.importId !== opened?.importId && (
                <>
                  {' '}
                  <ActionButton
                    class="link"
                    action={opening}
                    onRun={async () => {
                      const { importId } = entry;
                      setOpened(unwrap(await api.GET('/api/leads/imports/{importId}', inPath({ importId }))));
                    }}
                  >
                    Show the failed rows
                  </ActionButton>
                </>
              )}
              {entry.importId === opened?.importId && (
                <RowReport
                  kind="failed"
                  rows={opened.errors}
                  caption={`Rows of the import of ${formatDate(entry.createdAt)} that were not imported`}
                />
              )}
            </li>
          ))}
        </ul>
      </TitledSection>
    </TitledSection>
  );
}
